// Process-level hardening: no core dumps, no ptrace by peers, freed heap memory wiped.
// Wraps prctl, setrlimit, setenv and execv.
import CLibSecret
import Glibc
package import SystemCalls

/// Makes the process unfit to leak secrets through dumps, debuggers or freed memory.
package enum ProcessHardening {
  /// What was applied, for the start-up log line.
  package struct Report: Sendable {
    package let notDumpable: Bool
    package let coreLimitZero: Bool
  }

  /// Sets `PR_SET_DUMPABLE` 0 (no core dumps, no ptrace by the same user's processes, /proc/PID/mem
  /// readable only with CAP_SYS_PTRACE) and `RLIMIT_CORE` 0. Wraps prctl and setrlimit.
  package static func apply() -> Report {
    let dumpable = secretd_set_not_dumpable() == 0 && secretd_get_dumpable() == 0
    let core = (try? ResourceLimits.disableCoreFiles()) != nil
    return Report(notDumpable: dumpable, coreLimitZero: core)
  }

  /// The glibc allocator settings that wipe heap memory when it is freed: `perturb` fills every
  /// freed block, and a zero-sized thread cache makes every free take that path (glibc's
  /// per-thread cache skips it). Secrets that pass through GLib's and Swift's heap copies (a
  /// message buffer, a GVariant) are then gone when those copies are freed.
  static let wipingTunables = "glibc.malloc.perturb=165:glibc.malloc.tcache_count=0"

  /// Whether this process runs with ``wipingTunables``.
  package static var wipesFreedMemory: Bool {
    guard let tunables = getenv("GLIBC_TUNABLES").map({ String(cString: $0) }) else { return false }
    return tunables.contains("glibc.malloc.perturb=") && tunables.contains("glibc.malloc.tcache_count=0")
  }

  /// Starts this program again with ``wipingTunables`` (glibc reads them only at start), unless
  /// it already runs with them; returns only if it does, or if it cannot be started again.
  /// Wraps setenv and execv.
  package static func restartWipingFreedMemory(arguments: [String]) {
    guard !wipesFreedMemory else { return }
    let existing = getenv("GLIBC_TUNABLES").map { String(cString: $0) + ":" } ?? ""
    setenv("GLIBC_TUNABLES", existing + wipingTunables, 1)
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    // The file itself, not /proc/self/exe: the process keeps its name (`ps`, error messages).
    var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &path, path.count - 1)
    if length > 0 { execv(path, &argv) } else { execv("/proc/self/exe", &argv) }
    // Still here: exec failed. Go on, and say what is missing.
    argv.forEach { free($0) }
    Log.warning("could not restart with \(wipingTunables) (execv: \(Errno.current)); freed memory is not wiped")
  }
}
