// Process-level hardening and /proc reads. Wraps prctl, setrlimit, open/read.
import CLibSecret
import Glibc

/// Facts about processes, read from /proc.
public enum ProcessDetails {
  /// The command name of `pid` (`/proc/PID/comm`), if readable.
  public static func command(of pid: UInt32) -> String? {
    let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    var text = String(decoding: buffer[0..<count], as: UTF8.self)
    while text.last == "\n" { text.removeLast() }
    return text
  }

  /// This process's id. Wraps getpid.
  public static var currentPID: Int32 { getpid() }
}

/// Makes the process unfit to leak secrets through dumps or debuggers.
public enum ProcessHardening {
  /// What was applied, for the start-up log line.
  public struct Report: Sendable {
    public let notDumpable: Bool
    public let coreLimitZero: Bool
  }

  /// Sets `PR_SET_DUMPABLE` 0 (no core dumps, no ptrace by the same user's processes, /proc/PID/mem
  /// readable only with CAP_SYS_PTRACE) and `RLIMIT_CORE` 0. Wraps prctl and setrlimit.
  public static func apply() -> Report {
    let dumpable = secretd_set_not_dumpable() == 0 && secretd_get_dumpable() == 0
    var limit = rlimit(rlim_cur: 0, rlim_max: 0)
    let core = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0
    return Report(notDumpable: dumpable, coreLimitZero: core)
  }

  /// Unblocks every signal. A parent may spawn us with signals blocked (Foundation's `Process`
  /// does, from its dispatch threads), which would make SIGTERM and SIGINT never arrive.
  /// Wraps sigprocmask.
  public static func unblockSignals() {
    var none = sigset_t()
    sigemptyset(&none)
    _ = sigprocmask(SIG_SETMASK, &none, nil)
  }
}
