// File descriptors: reading, writing every byte, pipes, closing.
import Glibc

/// An open file descriptor. A value: closing is explicit, as with swift-system's.
package struct FileDescriptor: Hashable, Sendable {
  package let rawValue: CInt

  package init(rawValue: CInt) { self.rawValue = rawValue }

  package static let standardInput = FileDescriptor(rawValue: 0)
  package static let standardOutput = FileDescriptor(rawValue: 1)
  package static let standardError = FileDescriptor(rawValue: 2)

  /// How a file is opened: for reading, writing or both (`O_RDONLY`, `O_WRONLY`, `O_RDWR`).
  package struct AccessMode: RawRepresentable, Hashable, Sendable {
    package let rawValue: CInt
    package init(rawValue: CInt) { self.rawValue = rawValue }

    package static let readOnly = AccessMode(rawValue: O_RDONLY)
    package static let writeOnly = AccessMode(rawValue: O_WRONLY)
    package static let readWrite = AccessMode(rawValue: O_RDWR)
  }

  /// What else `open` does. Every descriptor it returns closes on exec, without asking.
  package struct OpenOptions: OptionSet, Hashable, Sendable {
    package let rawValue: CInt
    package init(rawValue: CInt) { self.rawValue = rawValue }

    /// Creates the file when it does not exist (`O_CREAT`).
    package static let create = OpenOptions(rawValue: O_CREAT)
    /// With ``create``: fails with ``Errno/exists`` when the file exists (`O_EXCL`).
    package static let exclusiveCreate = OpenOptions(rawValue: O_EXCL)
    /// Fails unless the path is a folder (`O_DIRECTORY`).
    package static let directory = OpenOptions(rawValue: O_DIRECTORY)
    /// A terminal opened this way does not become the controlling terminal (`O_NOCTTY`).
    package static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
    /// Fails with ``Errno/symbolicLinkLoop`` when the last component of the path is a symbolic
    /// link (`O_NOFOLLOW`).
    package static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
    /// Never waits in `open` or `read` (a FIFO with no writer) (`O_NONBLOCK`).
    package static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
  }

  /// Opens `path`; the descriptor closes on exec. `permissions` apply to a file ``OpenOptions/create``
  /// makes. Wraps open(2).
  package static func open(
    _ path: String, _ mode: AccessMode, options: OpenOptions = [], permissions: FilePermissions = .ownerReadWrite
  ) throws(Errno) -> FileDescriptor {
    let flags = mode.rawValue | options.rawValue | O_CLOEXEC
    return try FileDescriptor(rawValue: retryingOnInterrupt { Glibc.open(path, flags, mode_t(permissions.rawValue)) })
  }

  /// Writes every byte, retrying partial writes and interruptions. Wraps write(2).
  package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
    guard var next = bytes.baseAddress else { return }
    var left = bytes.count
    while left > 0 {
      let written = try retryingOnInterrupt { Glibc.write(rawValue, next, left) }
      next += written
      left -= written
    }
  }

  /// Writes the UTF-8 of `text`, every byte.
  package func writeAll(_ text: String) throws(Errno) {
    var text = text
    // withUTF8 rethrows untyped errors: carry the typed one out in a Result.
    try text.withUTF8 { bytes in Result { () throws(Errno) in try writeAll(UnsafeRawBufferPointer(bytes)) } }.get()
  }

  /// Reads what is available, up to the buffer's size; 0 at end of input. Wraps read(2).
  package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    guard let base = buffer.baseAddress else { return 0 }
    return try retryingOnInterrupt { Glibc.read(rawValue, base, buffer.count) }
  }

  /// Reads until end of input, or until more than `limit` bytes have come (then stops there).
  package func readAll(limit: Int = .max) throws(Errno) -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while result.count <= limit {
      let count = try chunk.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try read(into: raw) } }.get()
      if count == 0 { return result }
      result += chunk[0..<count]
    }
    return result
  }

  /// Wraps fsync(2).
  package func sync() throws(Errno) {
    _ = try retryingOnInterrupt { fsync(rawValue) }
  }

  /// Wraps close(2); an error here loses nothing the caller can retry, so it is dropped.
  package func close() { _ = Glibc.close(rawValue) }

  /// A file with no name holding `bytes`, positioned at its start, that closes on exec: made in
  /// /dev/shm (memory) where it exists, else in /tmp, and unlinked at once. Wraps mkstemp(3),
  /// fcntl(2), unlink(2) and lseek(2).
  package static func anonymousFile(holding bytes: [UInt8]) throws(Errno) -> FileDescriptor {
    var template = Array("/dev/shm/secretctl-XXXXXX".utf8CString)
    var raw = mkstemp(&template)
    if raw < 0 {
      template = Array("/tmp/secretctl-XXXXXX".utf8CString)
      raw = mkstemp(&template)
    }
    guard raw >= 0 else { throw Errno.current }
    guard unlink(template) == 0, fcntl(raw, F_SETFD, FD_CLOEXEC) == 0 else {
      let error = Errno.current
      Glibc.close(raw)
      throw error
    }
    let file = FileDescriptor(rawValue: raw)
    let written = bytes.withUnsafeBytes { buffer in Result { () throws(Errno) in try file.writeAll(buffer) } }
    guard case .success = written, lseek(raw, 0, SEEK_SET) == 0 else {
      let error = Errno.current
      file.close()
      if case .failure(let failure) = written { throw failure }
      throw error
    }
    return file
  }

  /// Makes `target` another descriptor of this file, one that stays open across exec. Wraps dup2(2).
  package func duplicate(onto target: FileDescriptor) throws(Errno) {
    _ = try retryingOnInterrupt { dup2(rawValue, target.rawValue) }
  }

  /// The owner, permissions and kind of the open file. Wraps fstat(2).
  package func status() throws(Errno) -> FileStatus {
    var info = stat()
    _ = try retryingOnInterrupt { fstat(rawValue, &info) }
    return FileStatus(
      owner: UserID(rawValue: info.st_uid), permissions: FilePermissions(rawValue: info.st_mode),
      isRegularFile: (info.st_mode & S_IFMT) == S_IFREG)
  }

  /// Whether the descriptor is a terminal. Wraps isatty(3).
  package var isTerminal: Bool { isatty(rawValue) == 1 }

  /// A pipe whose ends close on exec; with `nonBlockingWrite`, a full pipe fails a write rather
  /// than blocking it (what a signal handler needs). Wraps pipe(2) and fcntl(2).
  package static func pipe(nonBlockingWrite: Bool = false) throws(Errno) -> (
    read: FileDescriptor, write: FileDescriptor
  ) {
    var ends: [CInt] = [-1, -1]
    _ = try retryingOnInterrupt { Glibc.pipe(&ends) }
    let pair = (read: FileDescriptor(rawValue: ends[0]), write: FileDescriptor(rawValue: ends[1]))
    let writeFlags = fcntl(ends[1], F_GETFL)
    let configured =
      ends.allSatisfy { fcntl($0, F_SETFD, FD_CLOEXEC) == 0 } && writeFlags >= 0
      && (!nonBlockingWrite || fcntl(ends[1], F_SETFL, writeFlags | O_NONBLOCK) == 0)
    guard configured else {
      let error = Errno.current
      pair.read.close()
      pair.write.close()
      throw error
    }
    return pair
  }
}

/// What `fstat` says of a file that matters to whoever trusts its contents.
package struct FileStatus: Hashable, Sendable {
  package let owner: UserID
  package let permissions: FilePermissions
  package let isRegularFile: Bool
}

/// The permission bits of a file (`mode_t`'s lower twelve), as in `FilePermissions(rawValue: 0o644)`.
package struct FilePermissions: RawRepresentable, Hashable, Sendable {
  package let rawValue: UInt32
  package init(rawValue: UInt32) { self.rawValue = rawValue & 0o7777 }

  /// `0o600`: read and write for the owner only.
  package static let ownerReadWrite = FilePermissions(rawValue: 0o600)

  /// Whether anyone but the owner may read, write or run the file (any of `0o077`).
  package var allowsGroupOrOthers: Bool { rawValue & 0o077 != 0 }

  /// `0640`, as `ls` and `chmod` write it.
  package var octal: String { "0" + String(rawValue, radix: 8) }
}
