// Terminals: their settings, changed for a while (echo off for a prompt) and put back even when
// a signal ends the process meanwhile.
import Glibc
import Synchronization

/// A terminal's settings, as tcgetattr(3) reads them.
package struct TerminalAttributes: Sendable {
  fileprivate var raw: termios

  /// These settings with echo off and line editing kept.
  package var withoutEcho: TerminalAttributes {
    var quiet = self
    quiet.raw.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
    return quiet
  }
}

extension FileDescriptor {
  /// The controlling terminal of this process, opened for reading and writing.
  /// Wraps open(2) of /dev/tty.
  package static func openControllingTerminal() throws(Errno) -> FileDescriptor {
    try open("/dev/tty", .readWrite, options: .noControllingTerminal)
  }

  /// The settings of the terminal this descriptor refers to. Wraps tcgetattr(3).
  package func terminalAttributes() throws(Errno) -> TerminalAttributes {
    var settings = termios()
    guard tcgetattr(rawValue, &settings) == 0 else { throw .current }
    return TerminalAttributes(raw: settings)
  }

  /// Applies settings now, without discarding input already typed (or, under test, already
  /// written to a pseudo-terminal): `TCSANOW`, never `TCSAFLUSH`. Async-signal-safe.
  /// Wraps tcsetattr(3).
  package func setTerminalAttributes(_ attributes: TerminalAttributes) throws(Errno) {
    var settings = attributes.raw
    guard tcsetattr(rawValue, TCSANOW, &settings) == 0 else { throw .current }
  }

  /// Runs `body` with the terminal set to `changed`, then puts `original` back. When one of
  /// `signals` arrives meanwhile, a handler puts `original` back and the process then ends
  /// as that signal's default action says; a stop signal among them (SIGTSTP from Ctrl-Z,
  /// SIGTTIN or SIGTTOU in the background) stops the process with `original` in place and sets
  /// `changed` again when it is continued. A signal the process ignores is left ignored. The
  /// handlers `signals` had before are restored after `body`. Call it from one thread at a time.
  package func withTerminalAttributes<R, E: Error>(
    _ changed: TerminalAttributes, restoring original: TerminalAttributes, on signals: [Signal],
    _ body: () throws(E) -> R
  ) throws(E) -> R {
    changedTerminal = (self, original, changed)
    let previous = signals.compactMap { signal -> (Signal, Signal.Disposition)? in
      // Ignored (nohup, a shell's SIGTTOU): it cannot end us, and must not start to.
      guard !signal.disposition.ignores else { return nil }
      let installed =
        signal.stopsByDefault
        ? try? signal.handle(with: restoreTerminalAndStop, restartCalls: true)
        : try? signal.handle(with: restoreTerminalAndDie, restartCalls: false)
      return installed.map { (signal, $0) }
    }
    defer {
      // Handlers first: a Ctrl-Z between the two would otherwise find our handler, which turns
      // echo off again when continued, after the settings were put back.
      for (signal, disposition) in previous { signal.restore(disposition) }
      if terminalIsChanged.exchange(false, ordering: .sequentiallyConsistent) { try? setTerminalAttributes(original) }
      changedTerminal = nil
    }
    // Changed after the handlers are in place, and marked changed before it is, so a signal
    // never leaves it changed (restoring what was never changed is harmless).
    terminalIsChanged.store(true, ordering: .sequentiallyConsistent)
    try? setTerminalAttributes(changed)
    return try body()
  }

  /// Whether this terminal's foreground process group is ours. Wraps tcgetpgrp(3), which is
  /// async-signal-safe.
  fileprivate var isOurForeground: Bool { tcgetpgrp(rawValue) == getpgrp() }
}

/// The terminal and the settings to put back if a signal ends the process while they are
/// changed.
///
/// `nonisolated(unsafe)` is sound here: it is written only by the thread in
/// `withTerminalAttributes`, before the signal handlers that read it are installed and after
/// they are removed again (`sigaction` is a system call, which orders the write before any
/// delivery), and that function runs on one thread at a time; so a handler, on whichever thread
/// it runs, never sees a write in progress.
nonisolated(unsafe) private var changedTerminal:
  (descriptor: FileDescriptor, original: TerminalAttributes, changed: TerminalAttributes)?

/// Whether the terminal has our changed settings now: only then do the handlers put the
/// original ones back, so that a process stopped or continued in the background never
/// overwrites the settings of whoever has the terminal then (a shell's line editor). Atomic, so
/// that handlers on any thread and the prompt's thread agree without a lock.
private let terminalIsChanged = Atomic<Bool>(false)

/// Puts the original settings back if the changed ones are in place.
private func restoreIfChanged() {
  guard let (descriptor, original, _) = changedTerminal,
    terminalIsChanged.exchange(false, ordering: .sequentiallyConsistent)
  else { return }
  withTerminalSignalsBlocked { try? descriptor.setTerminalAttributes(original) }
}

/// A C signal handler: put the terminal's settings back, then die of the signal as the process
/// would have. tcsetattr, signal and raise are async-signal-safe.
private func restoreTerminalAndDie(_ number: CInt) {
  restoreIfChanged()
  Signal(rawValue: number).raiseWithDefaultAction()
}

/// A C signal handler for a stop signal (SIGTSTP, SIGTTIN, SIGTTOU): put the terminal's
/// settings back and stop as the signal's default action would, here and now (the signal is
/// unblocked for that); once continued in the foreground, set the changed settings again (in
/// the background they wait: reading the terminal there stops us again, with SIGTTIN), and
/// handle the next stop the same way. tcsetattr, tcgetpgrp, signal, sigprocmask, raise and
/// sigaction are async-signal-safe.
private func restoreTerminalAndStop(_ number: CInt) {
  guard let (descriptor, _, changed) = changedTerminal else { return }
  restoreIfChanged()
  _ = signal(number, SIG_DFL)
  var stop = sigset_t()
  sigemptyset(&stop)
  sigaddset(&stop, number)
  _ = sigprocmask(SIG_UNBLOCK, &stop, nil)
  _ = raise(number)
  // Continued (SIGCONT): in the foreground the prompt goes on, with echo off again.
  if descriptor.isOurForeground {
    terminalIsChanged.store(true, ordering: .sequentiallyConsistent)
    withTerminalSignalsBlocked { try? descriptor.setTerminalAttributes(changed) }
  }
  _ = try? Signal(rawValue: number).handle(with: restoreTerminalAndStop, restartCalls: true)
}

/// Runs `body` with SIGTTIN and SIGTTOU blocked: a process in the background may then set the
/// terminal (the kernel lets it when SIGTTOU is blocked) instead of being stopped again in the
/// middle of a handler. sigprocmask is async-signal-safe.
private func withTerminalSignalsBlocked(_ body: () -> Void) {
  var blocked = sigset_t()
  sigemptyset(&blocked)
  sigaddset(&blocked, SIGTTIN)
  sigaddset(&blocked, SIGTTOU)
  var saved = sigset_t()
  _ = sigprocmask(SIG_BLOCK, &blocked, &saved)
  body()
  _ = sigprocmask(SIG_SETMASK, &saved, nil)
}
