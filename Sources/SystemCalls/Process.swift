// The running process: its ids, resource limits, environment, exit status, and the program it
// runs.
import Glibc

/// A process id.
package struct ProcessID: Hashable, Sendable, CustomStringConvertible {
  package let rawValue: Int32

  package init(rawValue: Int32) { self.rawValue = rawValue }

  /// This process. Wraps getpid(2).
  package static var current: ProcessID { ProcessID(rawValue: getpid()) }

  package var description: String { String(rawValue) }

  /// The command name (`/proc/PID/comm`), if the process exists and may be read.
  package var command: String? {
    guard let file = try? FileDescriptor.open("/proc/\(rawValue)/comm", .readOnly) else { return nil }
    defer { file.close() }
    var buffer = [UInt8](repeating: 0, count: 64)
    guard let count = try? buffer.withUnsafeMutableBytes({ (raw) throws(Errno) -> Int in try file.read(into: raw) }),
      count > 0
    else { return nil }
    return String(decoding: buffer[0..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
  }
}

/// A Unix user id.
package struct UserID: Hashable, Sendable, CustomStringConvertible {
  package let rawValue: UInt32

  package init(rawValue: UInt32) { self.rawValue = rawValue }

  /// The real user id of this process. Wraps getuid(2).
  package static var current: UserID { UserID(rawValue: getuid()) }

  /// The effective user id of this process: the one the kernel and the bus credit its
  /// connections to. Wraps geteuid(2).
  package static var effective: UserID { UserID(rawValue: geteuid()) }

  package var description: String { String(rawValue) }
}

/// Resource limits of this process (getrlimit/setrlimit).
package enum ResourceLimits {
  /// Bytes this process may lock in memory (RLIMIT_MEMLOCK, soft limit); nil when unlimited.
  /// Wraps getrlimit(2).
  package static var lockedMemory: Int? {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0 else { return nil }
    return limit.rlim_cur == rlim_t.max ? nil : Int(clamping: limit.rlim_cur)  // rlim_t.max is RLIM_INFINITY
  }

  /// Sets this process's locked-memory limit (soft and hard) to `bytes`. Wraps setrlimit(2).
  package static func setLockedMemory(_ bytes: Int) throws(Errno) {
    var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
    guard setrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0 else { throw .current }
  }

  /// Forbids core files (RLIMIT_CORE 0). Wraps setrlimit(2).
  package static func disableCoreFiles() throws(Errno) {
    var limit = rlimit(rlim_cur: 0, rlim_max: 0)
    guard setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { throw .current }
  }
}

/// The status a process exits with, as exit(3) takes it and its parent's wait(2) sees it.
package struct ExitStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  package let rawValue: Int32

  package init(rawValue: Int32) { self.rawValue = rawValue }

  package static let success = ExitStatus(rawValue: 0)
  package static let failure = ExitStatus(rawValue: 1)

  package var description: String { String(rawValue) }

  /// Ends the process with this status, after the functions registered with ``runAtExit(_:)``
  /// and with standard output flushed. Wraps exit(3).
  package func exit() -> Never { Glibc.exit(rawValue) }
}

/// The environment of this process, which the programs it executes inherit.
package enum Environment {
  /// The value of `name`; nil when it is not set. Wraps getenv(3).
  package static func value(of name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  /// Every variable, in the order the environment holds them. Reads environ(7).
  package static var entries: [(name: String, value: String)] {
    var entries: [(name: String, value: String)] = []
    var cursor = environ
    while let entry = cursor.pointee {
      let text = String(cString: entry)
      if let equals = text.firstIndex(of: "=") {
        entries.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
      }
      cursor += 1
    }
    return entries
  }

  /// Removes `name`. Wraps unsetenv(3).
  package static func remove(_ name: String) { unsetenv(name) }

  /// Sets `name` to `value`, replacing any value it had. Wraps setenv(3).
  package static func set(_ name: String, to value: String) throws(Errno) {
    guard setenv(name, value, 1) == 0 else { throw .current }
  }

  /// Sets `name` to the bytes of `value`, which must not contain NUL (``Errno/invalidArgument``
  /// when they do). The terminated copy made for setenv(3) is wiped, so a secret passed this
  /// way is left only in the environment itself. Wraps setenv(3).
  package static func set(_ name: String, to value: UnsafeRawBufferPointer) throws(Errno) {
    guard !value.contains(0) else { throw .invalidArgument }
    let terminated = UnsafeMutableBufferPointer<CChar>.allocate(capacity: value.count + 1)
    defer {
      Memory.wipe(UnsafeMutableRawBufferPointer(terminated))
      terminated.deallocate()
    }
    if value.count > 0 { UnsafeMutableRawBufferPointer(terminated).copyMemory(from: value) }
    terminated[value.count] = 0
    guard let base = terminated.baseAddress else { throw .invalidArgument }
    guard setenv(name, base, 1) == 0 else { throw .current }
  }
}

/// The path of the program this process runs (`/proc/self/exe`); nil when it cannot be read.
/// Wraps readlink(2).
package func currentExecutablePath() -> String? {
  var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
  let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard length > 0 else { return nil }
  return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Replaces this process with `program`, giving it `arguments` (the first is its name, as
/// `argv[0]`) and this process's environment. With `searchingPath`, a `program` without a
/// slash is looked for in `PATH`, as a shell does. Returns only when that fails, with why.
/// Wraps execv(3) and execvp(3).
package func execute(_ program: String, arguments: [String], searchingPath: Bool = false) -> Errno {
  var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
  defer { argv.forEach { free($0) } }
  if searchingPath { execvp(program, &argv) } else { execv(program, &argv) }
  return .current
}
