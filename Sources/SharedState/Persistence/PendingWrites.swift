import Foundation
import Synchronization
import SystemCalls

/// The one place where every batching key registers the writes it still owes, so they are
/// flushed before the process ends.
///
/// Public for two readers. A host program decides when and whether flushing happens
/// (``flushAll()``, ``installsExitHandlersAutomatically``, ``uninstallExitHandlers()``). A key
/// author whose key defers writes by its own means registers a flush closure with
/// ``register(_:)`` and keeps the returned ``Registration``; keys over ``PersistentValue``
/// (every key of this package and of `Secrets`) are registered by it already.
///
/// Flushing happens:
/// - when the host calls ``flushAll()`` (for example before `exit(_:)` from a daemon's
///   shutdown path);
/// - at normal exit, from an `atexit(3)` hook;
/// - on SIGTERM and SIGINT. The signal handler only writes one byte to a pipe; a dedicated
///   thread does the flushing, then hands the signal to the disposition the host had before
///   (its handler, or the default action that ends the process), by restoring it and raising
///   the signal again. A signal the host ignores (`SIG_IGN`) is left alone.
///
/// Handlers are installed on the first ``register(_:)`` unless the host opted out with
/// ``installsExitHandlersAutomatically`` set to `false` before that; the host can also call
/// ``installExitHandlers()`` itself, or ``uninstallExitHandlers()`` to put its own dispositions
/// back and turn the exit hook off for good (until it calls ``installExitHandlers()`` again).
///
/// ```swift
/// let registration = PendingWrites.register { outbox.sendPending() }
/// // … on shutdown, explicitly:
/// PendingWrites.flushAll()
/// registration.cancel()
/// ```
public enum PendingWrites {
  /// Keeps a flush closure registered; cancelled (unregistered) on ``cancel()`` or release.
  public final class Registration: Sendable {
    let id: UInt64

    init(id: UInt64) { self.id = id }

    deinit { cancel() }

    /// Unregisters the flush closure. Later calls do nothing.
    public func cancel() {
      _ = registry.withLock { $0.flushes.removeValue(forKey: id) }
    }
  }

  /// The signals handled by ``installExitHandlers()``.
  static let handledSignals: [Signal] = [.terminate, .interrupt]

  /// Registers a closure that writes whatever its owner still has pending.
  ///
  /// The closure may run on any thread: from ``flushAll()``, the exit hook or the signal
  /// thread. It must be synchronous and must not call ``flushAll()``.
  ///
  /// - Parameter flush: Writes pending values now.
  /// - Returns: Keep it: releasing it unregisters the closure.
  public static func register(_ flush: @escaping @Sendable () -> Void) -> Registration {
    let (id, install) = registry.withLock { state in
      state.nextID += 1
      state.flushes[state.nextID] = flush
      return (state.nextID, state.automatic && !state.installed)
    }
    if install { installExitHandlers() }
    return Registration(id: id)
  }

  /// Runs every registered flush closure now, on the calling thread.
  public static func flushAll() {
    let flushes = registry.withLock { state in
      state.flushes.sorted { $0.key < $1.key }.map(\.value)
    }
    for flush in flushes { flush() }
  }

  /// Whether the first ``register(_:)`` installs the exit hook and signal handlers (default
  /// `true`). Set it to `false` before any key batches to opt out;
  /// ``uninstallExitHandlers()`` sets it to `false` too.
  public static var installsExitHandlersAutomatically: Bool {
    get { registry.withLock { $0.automatic } }
    set { registry.withLock { $0.automatic = newValue } }
  }

  /// Whether the exit hook and signal handlers are installed.
  public static var exitHandlersInstalled: Bool { registry.withLock { $0.installed } }

  /// Installs the `atexit(3)` hook and the SIGTERM/SIGINT handlers. Idempotent.
  ///
  /// The previous disposition of each signal is saved; after flushing, the signal is handed
  /// to it. Signals whose disposition is `SIG_IGN` are not touched.
  public static func installExitHandlers() {
    let needsHook = registry.withLock { state -> Bool in
      guard !state.installed else { return false }
      state.installed = true
      defer { state.exitHookRegistered = true }
      return !state.exitHookRegistered
    }
    if needsHook { runAtExit { PendingWrites.flushAtExit() } }
    SignalRelay.install(handledSignals)
  }

  /// Restores the signal dispositions saved by ``installExitHandlers()`` and disables the exit
  /// hook (the hook itself cannot be removed from `atexit(3)`; it then does nothing).
  ///
  /// It also turns ``installsExitHandlersAutomatically`` off, so the next key that batches does
  /// not install them again. To opt back in, call ``installExitHandlers()``.
  public static func uninstallExitHandlers() {
    registry.withLock { state in
      state.installed = false
      state.automatic = false
    }
    SignalRelay.uninstall()
  }

  static func flushAtExit() {
    guard registry.withLock({ $0.installed }) else { return }
    flushAll()
  }

  struct State {
    var nextID: UInt64 = 0
    var flushes: [UInt64: @Sendable () -> Void] = [:]
    var automatic = true
    var installed = false
    var exitHookRegistered = false
  }

  static let registry = Mutex(State())
}

/// Turns SIGTERM/SIGINT into flushes on a normal thread, then chains to the host's
/// disposition.
enum SignalRelay {
  private struct State {
    var started = false
    var previous: [Signal: Signal.Disposition] = [:]
  }

  private static let state = Mutex(State())

  static func install(_ signals: [Signal]) {
    state.withLock { state in
      if !state.started {
        let pipe: FileDescriptor
        do { pipe = try SignalPipe.open() } catch {
          SharedEnvironment.printIssue(
            "PendingWrites could not create its signal pipe (\(error)); pending writes are flushed at exit only.")
          return
        }
        state.started = true
        NativeThread.detach(name: "shared-writes") { relayLoop(pipe) }
      }
      for signal in signals where state.previous[signal] == nil {
        if signal.disposition.ignores { continue }
        if let previous = try? signal.handle(with: SignalPipe.handler) { state.previous[signal] = previous }
      }
    }
  }

  static func uninstall() {
    state.withLock { state in
      for (signal, previous) in state.previous { signal.restore(previous) }
      state.previous = [:]
    }
  }

  private static func relayLoop(_ pipe: FileDescriptor) {
    Signal.unblock(PendingWrites.handledSignals)
    var byte: UInt8 = 0
    while (try? withUnsafeMutableBytes(of: &byte) { raw in Result { () throws(Errno) in try pipe.read(into: raw) } }
      .get()) == 1
    {
      let signal = Signal(rawValue: CInt(byte))
      PendingWrites.flushAll()
      // Hand the signal to what the host had: its handler runs, or the default action ends
      // the process here. If the process survives, catch the next one again.
      guard let previous = state.withLock({ $0.previous[signal] }) else { continue }
      signal.restore(previous)
      signal.raise()
      state.withLock { state in
        if state.previous[signal] != nil { _ = try? signal.handle(with: SignalPipe.handler) }
      }
    }
  }
}
