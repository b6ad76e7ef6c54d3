import Foundation
import SecretTestSupport

/// CPU seconds of `pid`'s threads, to the nanosecond: the first field of each thread's
/// /proc/PID/task/TID/schedstat (/proc/PID/stat counts in clock ticks of 10 ms, coarser than
/// a whole round of calls). Threads that have ended are not counted.
public func cpuSeconds(_ pid: Int32) -> Double {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
  let nanoseconds = tasks.compactMap { task in
    (try? readProcFile("/proc/\(pid)/task/\(task)/schedstat"))?.split(separator: " ").first.flatMap { UInt64($0) }
  }
  return Double(nanoseconds.reduce(0, +)) / 1e9
}

/// This process's CPU seconds (a libsecret client and its GDBus thread).
public func ownCPUSeconds() -> Double {
  var usage = rusage()
  getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
  return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A process's resident memory, KiB, from /proc/PID/status and smaps: all of it, the part not
/// backed by files such as shared libraries, shared memory, and secret memory and memfds (a
/// secretd's store: the kernel leaves memfd_secret pages out of VmRSS, and smaps has them).
public struct ResidentMemory: CustomStringConvertible, Sendable {
  public var resident = 0
  public var anonymous = 0
  public var shared = 0
  public var store = 0

  public init(of pid: Int32) {
    if let status = try? readProcFile("/proc/\(pid)/status") {
      func field(_ name: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        return Self.kibibytes(line)
      }
      (resident, anonymous, shared) = (field("VmRSS"), field("RssAnon"), field("RssShmem"))
    }
    store = Self.storeResident(pid)
  }

  /// The Rss of the mappings of /secretmem and of memfds.
  static func storeResident(_ pid: Int32) -> Int {
    guard let smaps = try? readProcFile("/proc/\(pid)/smaps") else { return 0 }
    var inStore = false
    var total = 0
    for line in smaps.split(separator: "\n") {
      let range = line.prefix { $0 != " " }
      if range.contains("-"), range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
        inStore = line.contains("/secretmem") || line.contains("/memfd:")
      } else if inStore, line.hasPrefix("Rss:") {
        total += kibibytes(line)
      }
    }
    return total
  }

  static func kibibytes(_ line: Substring) -> Int {
    Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
  }

  public var description: String {
    "\(resident) KiB resident (\(anonymous) KiB private, \(shared) KiB shared memory) + \(store) KiB of store in "
      + "secret memory or memfds"
  }
}
