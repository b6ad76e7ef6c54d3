public import Foundation
import Synchronization

/// A child process started with `posix_spawn`, with every signal unblocked and at its default.
///
/// Foundation's `Process` spawns from whichever thread calls it and the child inherits that
/// thread's signal mask; from a Dispatch worker SIGTERM is blocked, so the child could never be
/// asked to stop. Spawning with an explicit empty mask gives children the signals a shell would.
public final class ChildProcess: Sendable {
  public let pid: pid_t
  private let exitStatus = Mutex<Int32?>(nil)

  /// Starts `executable` with `arguments` and exactly `environment`, with the given descriptors
  /// as its standard input, output and error, and `inheriting` as its descriptors 3, 4, … (as a
  /// service manager passes descriptors).
  public convenience init(
    _ executable: URL, _ arguments: [String], environment: [String: String],
    stdin: Int32, stdout: Int32, stderr: Int32, inheriting: [Int32] = []
  ) throws {
    try self.init(executable, arguments, environment, newSession: false) { actions in
      let targets: [(source: Int32, target: Int32)] =
        [(stdin, 0), (stdout, 1), (stderr, 2)] + inheriting.enumerated().map { ($1, Int32(3 + $0)) }
      for (source, target) in targets {
        posix_spawn_file_actions_adddup2(&actions, source, target)
      }
    }
  }

  /// Starts `executable` in a session of its own whose controlling terminal is `terminal` (the
  /// path of a pseudo-terminal's secondary side), as its standard input, output and error.
  public convenience init(
    _ executable: URL, _ arguments: [String], environment: [String: String], controllingTerminal terminal: String
  ) throws {
    try self.init(executable, arguments, environment, newSession: true) { actions in
      // Opened in the child after setsid, so the terminal becomes its controlling terminal.
      posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0)
      posix_spawn_file_actions_adddup2(&actions, 0, 1)
      posix_spawn_file_actions_adddup2(&actions, 0, 2)
    }
  }

  private init(
    _ executable: URL, _ arguments: [String], _ environment: [String: String], newSession: Bool,
    streams: (inout posix_spawn_file_actions_t) -> Void
  ) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    streams(&actions)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc ≥ 2.26), not exported to Swift.
    let flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (newSession ? setsid : 0)
    posix_spawnattr_setflags(&attributes, Int16(flags))

    let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let result = Self.descriptorLock.withLock { _ in
      posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
    }
    guard result == 0 else {
      throw HarnessError("cannot start \(executable.path): \(String(cString: strerror(result)))")
    }
    self.pid = pid
  }

  /// Held while a pipe is made and marked close-on-exec, and while a child is spawned, so that
  /// no child of a concurrent test inherits another test's pipe (Swift's Glibc lacks `pipe2`).
  private static let descriptorLock = Mutex(())

  /// A pipe whose ends are not inherited by children: `(read, write)`.
  public static func makePipe() throws -> (read: Int32, write: Int32) {
    try descriptorLock.withLock { _ in
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else { throw HarnessError("cannot create a pipe") }
      ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
      return (ends[0], ends[1])
    }
  }

  /// Whether the child is still running; reaps it once it has exited.
  public var isRunning: Bool {
    exitStatus.withLock { status in
      guard status == nil else { return false }
      var raw: Int32 = 0
      guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
      status = raw
      return false
    }
  }

  public func signal(_ signal: Int32) {
    if isRunning { kill(pid, signal) }
  }

  /// How a child ended.
  public enum Termination: Equatable, Sendable {
    case exited(Int32)
    case signalled(Int32)
  }

  /// Waits for the child to end and says how.
  public func waitForTermination() -> Termination {
    let raw = exitStatus.withLock { status -> Int32 in
      if let status { return status }
      var raw: Int32 = 0
      while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
      status = raw
      return raw
    }
    let signal = raw & 0x7f
    return signal == 0 ? .exited((raw >> 8) & 0xff) : .signalled(signal)
  }

  /// Waits for the child to exit and returns its exit code (128 + signal when killed).
  @discardableResult
  public func wait() -> Int32 {
    switch waitForTermination() {
    case .exited(let code): code
    case .signalled(let signal): 128 + signal
    }
  }
}
