// Signals: numbers with names, handlers installed and restored, masks.
import Glibc

/// A POSIX signal.
package struct Signal: Hashable, Sendable, CustomStringConvertible {
  package let rawValue: CInt

  package init(rawValue: CInt) { self.rawValue = rawValue }

  package static let hangUp = Signal(rawValue: SIGHUP)
  package static let interrupt = Signal(rawValue: SIGINT)
  package static let quit = Signal(rawValue: SIGQUIT)
  package static let kill = Signal(rawValue: SIGKILL)
  package static let brokenPipe = Signal(rawValue: SIGPIPE)
  package static let terminate = Signal(rawValue: SIGTERM)
  package static let terminalStop = Signal(rawValue: SIGTSTP)
  package static let `continue` = Signal(rawValue: SIGCONT)
  package static let stop = Signal(rawValue: SIGSTOP)
  package static let terminalInput = Signal(rawValue: SIGTTIN)
  package static let terminalOutput = Signal(rawValue: SIGTTOU)
  package static let alarm = Signal(rawValue: SIGALRM)
  package static let user1 = Signal(rawValue: SIGUSR1)
  package static let user2 = Signal(rawValue: SIGUSR2)

  /// Every signal a handler can catch whose default action ends the process (with or without a
  /// core file) or stops it: all but SIGKILL and SIGSTOP, which cannot be caught, and SIGCHLD,
  /// SIGURG, SIGWINCH and SIGCONT, which are ignored by default. The real-time signals are
  /// those glibc leaves to programs (SIGRTMIN to SIGRTMAX).
  package static var endingOrStopping: [Signal] {
    let fixed = [
      SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM,
      SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS, SIGTSTP, SIGTTIN, SIGTTOU,
    ]
    let realTime = Array(__libc_current_sigrtmin()...__libc_current_sigrtmax())
    return (fixed + realTime).map(Signal.init(rawValue:))
  }

  /// Whether the signal's default action stops the process (SIGTSTP, SIGTTIN, SIGTTOU; SIGSTOP
  /// cannot be caught).
  package var stopsByDefault: Bool { [SIGTSTP, SIGTTIN, SIGTTOU].contains(rawValue) }

  package var description: String {
    switch rawValue {
    case SIGHUP: "SIGHUP"
    case SIGINT: "SIGINT"
    case SIGQUIT: "SIGQUIT"
    case SIGKILL: "SIGKILL"
    case SIGPIPE: "SIGPIPE"
    case SIGTERM: "SIGTERM"
    case SIGTSTP: "SIGTSTP"
    case SIGCONT: "SIGCONT"
    case SIGSTOP: "SIGSTOP"
    case SIGTTIN: "SIGTTIN"
    case SIGTTOU: "SIGTTOU"
    case SIGALRM: "SIGALRM"
    case SIGUSR1: "SIGUSR1"
    case SIGUSR2: "SIGUSR2"
    default: "signal \(rawValue)"
    }
  }

  /// A signal's disposition, as returned when a handler replaces it, to restore later.
  package struct Disposition: @unchecked Sendable {
    // SAFETY: a plain C struct copied by value; it holds a function pointer and flags, no
    // references, and is only ever passed back to sigaction(2).
    fileprivate var action: sigaction

    /// Whether the disposition ignores the signal (SIG_IGN).
    package var ignores: Bool {
      guard action.sa_flags & SA_SIGINFO == 0, let handler = action.__sigaction_handler.sa_handler else { return false }
      return unsafeBitCast(handler, to: Int.self) == 1
    }

    /// Whether the disposition is a handler of the program's (not SIG_DFL or SIG_IGN).
    package var isHandler: Bool {
      if action.sa_flags & SA_SIGINFO != 0 { return action.__sigaction_handler.sa_sigaction != nil }
      guard let handler = action.__sigaction_handler.sa_handler else { return false }
      return unsafeBitCast(handler, to: Int.self) > 1
    }

    /// Calls the handler this disposition names, if it is one of the program's.
    package func callHandler(_ signal: Signal) {
      if action.sa_flags & SA_SIGINFO != 0 {
        action.__sigaction_handler.sa_sigaction?(signal.rawValue, nil, nil)
      } else if isHandler {
        action.__sigaction_handler.sa_handler?(signal.rawValue)
      }
    }
  }

  /// The current disposition. Wraps sigaction(2).
  package var disposition: Disposition {
    var old = sigaction()
    _ = sigaction(rawValue, nil, &old)
    return Disposition(action: old)
  }

  /// Installs `handler` and returns the disposition it replaced. `restartCalls` makes slow
  /// system calls interrupted by the signal restart (SA_RESTART). Wraps sigaction(2).
  @discardableResult
  package func handle(
    with handler: @convention(c) (CInt) -> Void, restartCalls: Bool = true
  ) throws(Errno) -> Disposition {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = handler
    sigemptyset(&action.sa_mask)
    action.sa_flags = restartCalls ? SA_RESTART : 0
    var old = sigaction()
    guard sigaction(rawValue, &action, &old) == 0 else { throw .current }
    return Disposition(action: old)
  }

  /// Puts back a disposition saved by ``handle(with:restartCalls:)``. Wraps sigaction(2).
  package func restore(_ disposition: Disposition) {
    var action = disposition.action
    _ = sigaction(rawValue, &action, nil)
  }

  /// Restores the default action and raises the signal, so the process ends (or stops) as the
  /// signal says. Wraps signal(2) and raise(3).
  package func raiseWithDefaultAction() {
    _ = Glibc.signal(rawValue, SIG_DFL)
    _ = Glibc.raise(rawValue)
  }

  /// Sends the signal to the calling thread. Wraps raise(3).
  package func raise() { _ = Glibc.raise(rawValue) }

  /// Sends the signal to `process`. Wraps kill(2).
  package func send(to process: ProcessID) throws(Errno) {
    guard Glibc.kill(process.rawValue, rawValue) == 0 else { throw .current }
  }

  /// Unblocks `signals` on the calling thread. Wraps pthread_sigmask(3).
  package static func unblock(_ signals: [Signal]) {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal.rawValue) }
    _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
  }

  /// Unblocks every signal in the calling thread (a parent may start us with some blocked).
  /// Wraps sigprocmask(2).
  package static func unblockAll() {
    var none = sigset_t()
    sigemptyset(&none)
    _ = sigprocmask(SIG_SETMASK, &none, nil)
  }
}

/// Relays signals to a pipe, so that a normal thread handles them: the handler itself only
/// writes the signal's number, which is async-signal-safe.
package enum SignalPipe {
  /// The write end of the pipe, read by `handler`; -1 until set.
  nonisolated(unsafe) private static var descriptor: CInt = -1
  // SAFETY: written once by `open()` before any handler is installed (sigaction orders it
  // before the handler can run), then only read, from the handler.

  /// Opens the pipe and returns its read end; later calls return the same one.
  package static func open() throws(Errno) -> FileDescriptor {
    if let opened { return opened }
    let pipe = try FileDescriptor.pipe(nonBlockingWrite: true)
    descriptor = pipe.write.rawValue
    opened = pipe.read
    return pipe.read
  }

  nonisolated(unsafe) private static var opened: FileDescriptor?
  // SAFETY: only touched by `open()`, which callers serialise (PendingWrites holds its lock).

  /// The handler to install: saves errno, writes the signal number, restores errno.
  package static let handler: @convention(c) (CInt) -> Void = { signal in
    let saved = errno
    if descriptor >= 0 {
      var byte = UInt8(truncatingIfNeeded: signal)
      _ = write(descriptor, &byte, 1)
    }
    errno = saved
  }
}

/// Registers a function to run at normal process exit. Wraps atexit(3).
package func runAtExit(_ function: @convention(c) () -> Void) { _ = atexit(function) }
