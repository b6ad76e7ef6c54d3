import Glibc
import Foundation
import Synchronization

/// Every raw C call of the module, as internal wrappers that check return codes.
///
/// Public files never call libc directly. Failures become ``FileStorageError/systemCall(_:path:errno:)``,
/// which names the call, the file and what to do.
enum Syscalls {
  // MARK: Files

  /// Reads a whole file; `nil` when it does not exist. Wraps `open(2)`, `read(2)`.
  static func readFile(atPath path: String) throws(FileStorageError) -> Data? {
    let fd = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
    if fd < 0 {
      if errno == ENOENT { return nil }
      throw .systemCall("open", path: path, errno: errno)
    }
    defer { _ = close(fd) }
    var result = Data()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { raw in
        retryingOnInterrupt { read(fd, raw.baseAddress, raw.count) }
      }
      if count < 0 { throw .systemCall("read", path: path, errno: errno) }
      if count == 0 { break }
      result.append(contentsOf: buffer[0..<count])
    }
    return result
  }

  /// Replaces a file atomically: writes a temporary file in the same folder, `fsync(2)`s it,
  /// keeps the permissions of the file it replaces, `rename(2)`s it over the target, and
  /// `fsync(2)`s the folder. Creates missing folders.
  ///
  /// A failure after the rename is ``FileStorageError/replacedButNotSynced(path:errno:)``: the
  /// file holds `data` then; after any other error it is untouched.
  static func writeFileAtomically(_ data: Data, toPath path: String) throws(FileStorageError) {
    let (directory, name) = split(path)
    try createDirectories(directory)

    var info = stat()
    let existingMode: mode_t? = stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fd = retryingOnInterrupt {
      open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, existingMode ?? 0o644)
    }
    if fd < 0 { throw .systemCall("open", path: temporary, errno: errno) }
    var removeTemporary = true
    defer { if removeTemporary { _ = unlink(temporary) } }
    do {
      defer { _ = close(fd) }
      if let existingMode, fchmod(fd, existingMode) != 0 {
        throw FileStorageError.systemCall("fchmod", path: temporary, errno: errno)
      }
      let writeError: Int32? = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int32? in
        var offset = 0
        while offset < raw.count {
          let written = retryingOnInterrupt {
            write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
          }
          if written < 0 { return errno }
          offset += written
        }
        return nil
      }
      if let writeError { throw FileStorageError.systemCall("write", path: temporary, errno: writeError) }
      if fsync(fd) != 0 { throw FileStorageError.systemCall("fsync", path: temporary, errno: errno) }
    }
    if rename(temporary, path) != 0 { throw .systemCall("rename", path: path, errno: errno) }
    removeTemporary = false
    if let code = syncDirectory(directory) { throw .replacedButNotSynced(path: path, errno: code) }
  }

  /// `fsync(2)`s a folder; returns the `errno` of the call that failed, if one did.
  private static func syncDirectory(_ directory: String) -> Int32? {
    let fd = retryingOnInterrupt { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    if fd < 0 { return errno }
    defer { _ = close(fd) }
    // Some file systems cannot sync a folder; the rename itself is already atomic there.
    if fsync(fd) != 0, errno != EINVAL, errno != EROFS { return errno }
    return nil
  }

  private static func createDirectories(_ directory: String) throws(FileStorageError) {
    var info = stat()
    if directory.isEmpty || stat(directory, &info) == 0 { return }
    let (parent, _) = split(directory)
    if parent != directory { try createDirectories(parent) }
    if mkdir(directory, 0o755) != 0, errno != EEXIST {
      throw .systemCall("mkdir", path: directory, errno: errno)
    }
  }

  /// Splits `/a/b/c.json` into `/a/b` and `c.json`.
  static func split(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let directory = String(path[..<slash])
    return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
  }

  static func fileExists(atPath path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
  }

  // MARK: inotify

  /// Opens a non-blocking inotify instance. Wraps `inotify_init1(2)`.
  static func inotifyInstance() throws(FileStorageError) -> Int32 {
    let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    if fd < 0 { throw .systemCall("inotify_init1", path: "(inotify)", errno: errno) }
    return fd
  }

  /// Watches `directory` for files written, moved in, moved out or deleted, and returns the
  /// watch descriptor (the same one for a directory already watched). Wraps `inotify_add_watch(2)`.
  static func addWatch(_ fd: Int32, directory: String) throws(FileStorageError) -> Int32 {
    let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
    let watch = inotify_add_watch(fd, directory, mask)
    if watch < 0 { throw .systemCall("inotify_add_watch", path: directory, errno: errno) }
    return watch
  }

  /// Wraps `inotify_rm_watch(2)`.
  static func removeWatch(_ fd: Int32, _ watch: Int32) { _ = inotify_rm_watch(fd, watch) }

  /// Drains pending inotify events: the watch descriptor and file name of each. Wraps `read(2)`.
  static func readInotifyEvents(_ fd: Int32) -> [(watch: Int32, name: String)] {
    var events: [(watch: Int32, name: String)] = []
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    let header = MemoryLayout<inotify_event>.size
    while true {
      let count = buffer.withUnsafeMutableBytes { raw in
        retryingOnInterrupt { read(fd, raw.baseAddress, raw.count) }
      }
      if count <= 0 { break }
      var offset = 0
      while offset + header <= count {
        let (watch, length) = buffer.withUnsafeBytes { raw in
          (raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
           Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
        }
        let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)]
        events.append((watch, String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)))
        offset += header + length
      }
    }
    return events
  }

  // MARK: Signals

  /// Creates a pipe whose ends close on exec, with a non-blocking write end: a signal handler
  /// writes to it, and must not block when the pipe is full (the bytes already in it wake the
  /// reader anyway). Wraps `pipe(2)`, `fcntl(2)`.
  static func makePipe() -> (read: Int32, write: Int32)? {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    let closesOnExec = fds.allSatisfy { fcntl($0, F_SETFD, FD_CLOEXEC) == 0 }
    let writeFlags = fcntl(fds[1], F_GETFL)
    guard closesOnExec, writeFlags >= 0, fcntl(fds[1], F_SETFL, writeFlags | O_NONBLOCK) == 0 else {
      _ = close(fds[0])
      _ = close(fds[1])
      return nil
    }
    return (fds[0], fds[1])
  }

  /// Blocks until one byte arrives on `fd`; `nil` at end of file. Wraps `read(2)`.
  static func readByte(_ fd: Int32) -> UInt8? {
    var byte: UInt8 = 0
    let count = retryingOnInterrupt { read(fd, &byte, 1) }
    return count == 1 ? byte : nil
  }

  /// The current disposition of `signal`. Wraps `sigaction(2)`.
  static func currentAction(_ signal: Int32) -> sigaction {
    var old = sigaction()
    _ = sigaction(signal, nil, &old)
    return old
  }

  /// Whether a disposition is `SIG_IGN`.
  static func isIgnored(_ action: sigaction) -> Bool {
    guard action.sa_flags & SA_SIGINFO == 0, let handler = action.__sigaction_handler.sa_handler
    else { return false }
    return unsafeBitCast(handler, to: Int.self) == 1
  }

  /// Installs `handler` for `signal` and returns the previous disposition. Wraps `sigaction(2)`.
  static func install(
    _ handler: @convention(c) (Int32) -> Void, for signal: Int32
  ) -> sigaction? {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = handler
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    var old = sigaction()
    return sigaction(signal, &action, &old) == 0 ? old : nil
  }

  /// Restores a disposition. Wraps `sigaction(2)`.
  static func restore(_ action: sigaction, for signal: Int32) {
    var action = action
    _ = sigaction(signal, &action, nil)
  }

  /// Unblocks `signals` on the calling thread. Wraps `pthread_sigmask(3)`.
  static func unblock(_ signals: [Int32]) {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
  }

  /// Sends `signal` to the calling thread. Wraps `raise(3)`.
  static func raiseSignal(_ signal: Int32) { _ = raise(signal) }

  // MARK: Misc

  /// The system's text for an `errno` value. Wraps `strerror(3)`.
  static func describe(errno code: Int32) -> String {
    String(cString: strerror(code))
  }

  /// What the user can do about an `errno` value.
  static func advice(forErrno code: Int32) -> String {
    switch code {
    case EACCES, EPERM: "Check the permissions and owner of the file and its folder."
    case ENOSPC, EDQUOT:
      "Free some disk space or raise the quota (for inotify_add_watch: raise fs.inotify.max_user_watches)."
    case EROFS: "The file system is read-only; store the file elsewhere."
    case ENOENT, ENOTDIR: "Check that the folder exists and the path is right."
    case EMFILE, ENFILE: "Too many open files; close some or raise the limit (ulimit -n)."
    default: "Check that the path is valid and accessible."
    }
  }

  /// Registers a function to run at normal process exit. Wraps `atexit(3)`.
  static func registerAtExit(_ function: @convention(c) () -> Void) {
    _ = atexit(function)
  }

  /// Writes a message to standard error with `write(2)` (no buffering, no shared state).
  static func writeToStandardError(_ message: String) {
    var message = message
    message.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = write(2, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
        if written <= 0 { return }
        offset += written
      }
    }
  }

  /// A UTC timestamp usable in a file name, like `20250130T101500.123Z`. Wraps `gmtime_r(3)`.
  static func fileNameTimestamp(_ date: Date = Date()) -> String {
    let interval = date.timeIntervalSince1970
    var seconds = time_t(interval.rounded(.down))
    let milliseconds = Int((interval - interval.rounded(.down)) * 1000)
    var parts = tm()
    _ = gmtime_r(&seconds, &parts)
    func pad(_ value: Int32, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2) + "T"
      + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2) + "."
      + pad(Int32(milliseconds), 3) + "Z"
  }

  private static func retryingOnInterrupt<T: FixedWidthInteger>(_ call: () -> T) -> T {
    while true {
      let result = call()
      if result >= 0 || errno != EINTR { return result }
    }
  }
}

extension Syscalls {
  /// The write end of the signal pipe, read by ``relayHandler``; -1 until installed.
  static let signalRelayDescriptor = Atomic<Int32>(-1)

  /// The async-signal-safe handler: saves `errno`, writes the signal number to the pipe,
  /// restores `errno`. Wraps `write(2)`.
  static let relayHandler: @convention(c) (Int32) -> Void = { signal in
    let saved = errno
    let descriptor = Syscalls.signalRelayDescriptor.load(ordering: .acquiring)
    if descriptor >= 0 {
      var byte = UInt8(truncatingIfNeeded: signal)
      _ = write(descriptor, &byte, 1)
    }
    errno = saved
  }
}
