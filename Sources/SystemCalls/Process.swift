// The running process: its ids, resource limits, and what it lets others see of it.
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
    guard let file = try? FileDescriptor.open("/proc/\(rawValue)/comm", O_RDONLY) else { return nil }
    defer { file.close() }
    var buffer = [UInt8](repeating: 0, count: 64)
    guard let count = try? buffer.withUnsafeMutableBytes({ (raw) throws(Errno) -> Int in try file.read(into: raw) }), count > 0
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
