// Process-level hardening: no core dumps, no ptrace by peers, freed heap memory wiped.
// prctl through CSystemCalls (it is variadic); the rest through SystemCalls.
import CSystemCalls
import SystemCalls

/// Makes the process unfit to leak secrets through dumps, debuggers or freed memory.
package enum ProcessHardening {
  /// What was applied, for the start-up log line.
  package struct Report: Sendable {
    package let notDumpable: Bool
    package let coreLimitZero: Bool
  }

  /// Sets `PR_SET_DUMPABLE` 0 (no core dumps, no ptrace by the same user's processes, /proc/PID/mem
  /// readable only with CAP_SYS_PTRACE) and `RLIMIT_CORE` 0. Wraps prctl; setrlimit through
  /// ``ResourceLimits``; silences tpm2-tss's log (`TSS2_LOG`).
  package static func apply() -> Report {
    let dumpable = secretd_set_not_dumpable() == 0 && secretd_get_dumpable() == 0
    let core = (try? ResourceLimits.disableCoreFiles()) != nil
    // tpm2-tss's debug log prints session keys and unsealed data: whatever the environment
    // asks, it says nothing (TPM failures reach the log through our own errors). Set before
    // any thread starts.
    try? Environment.set("TSS2_LOG", to: "all+NONE")
    return Report(notDumpable: dumpable, coreLimitZero: core)
  }

  /// The glibc allocator settings that wipe heap memory when it is freed: `perturb` fills every
  /// freed block, and a zero-sized thread cache makes every free take that path (glibc's
  /// per-thread cache skips it). Secrets that pass through GLib's and Swift's heap copies (a
  /// message buffer, a GVariant) are then gone when those copies are freed.
  static let wipingTunables = "glibc.malloc.perturb=165:glibc.malloc.tcache_count=0"

  /// Whether this process runs with ``wipingTunables``.
  package static var wipesFreedMemory: Bool {
    guard let tunables = Environment.value(of: "GLIBC_TUNABLES") else { return false }
    return tunables.contains("glibc.malloc.perturb=") && tunables.contains("glibc.malloc.tcache_count=0")
  }

  /// Starts this program again with ``wipingTunables`` (glibc reads them only at start), unless
  /// it already runs with them; returns only if it does, or if it cannot be started again.
  package static func restartWipingFreedMemory(arguments: [String]) {
    guard !wipesFreedMemory else { return }
    let existing = Environment.value(of: "GLIBC_TUNABLES").map { $0 + ":" } ?? ""
    try? Environment.set("GLIBC_TUNABLES", to: existing + wipingTunables)
    // The file itself, not /proc/self/exe: the process keeps its name (`ps`, error messages).
    let program = Files.symbolicLinkTarget("/proc/self/exe") ?? "/proc/self/exe"
    let failure = execute(program, arguments: arguments)
    // Still here: exec failed. Go on, and say what is missing.
    Log.warning("could not restart with \(wipingTunables) (execv: \(failure)); freed memory is not wiped")
  }
}
