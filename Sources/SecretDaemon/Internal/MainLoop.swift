// The GLib main loop, signal sources and timers. Wraps g_main_loop_*, g_unix_signal_add, g_timeout_add.
import CLibSecret

/// The daemon's event loop on the default main context.
public final class MainLoop {
  private let raw: OpaquePointer
  private var handlers: [Callback] = []

  public init() {
    raw = g_main_loop_new(nil, 0)
  }

  deinit { g_main_loop_unref(raw) }

  /// Runs until `quit()`. Wraps g_main_loop_run.
  public func run() { g_main_loop_run(raw) }

  /// Wraps g_main_loop_quit.
  public func quit() { g_main_loop_quit(raw) }

  /// Calls `handler` on the loop when `signal` arrives. Wraps g_unix_signal_add.
  public func onSignal(_ signal: Int32, _ handler: @escaping () -> Void) {
    let callback = Callback(handler)
    handlers.append(callback)
    _ = g_unix_signal_add(
      signal,
      { userData in
        guard let userData else { return 0 }
        Unmanaged<Callback>.fromOpaque(userData).takeUnretainedValue().body()
        return 1  // G_SOURCE_CONTINUE
      }, Unmanaged.passUnretained(callback).toOpaque())
  }
}

final class Callback {
  let body: () -> Void
  init(_ body: @escaping () -> Void) { self.body = body }
}

/// A one-shot timer on the default main context; cancelled when released or rescheduled.
final class Timer {
  private var sourceID: UInt32 = 0
  private let callback: Callback

  init(_ body: @escaping () -> Void) { callback = Callback(body) }

  deinit { cancel() }

  /// Fires once after `milliseconds`, replacing any pending firing. Wraps g_timeout_add_full.
  func schedule(afterMilliseconds milliseconds: UInt32) {
    cancel()
    let retained = Unmanaged.passRetained(TimerFiring(timer: self))
    sourceID = g_timeout_add_full(
      0, milliseconds,
      { userData in
        guard let userData else { return 0 }
        let firing = Unmanaged<TimerFiring>.fromOpaque(userData).takeUnretainedValue()
        if let timer = firing.timer {
          timer.sourceID = 0
          timer.callback.body()
        }
        return 0  // G_SOURCE_REMOVE
      }, retained.toOpaque(),
      { userData in
        guard let userData else { return }
        Unmanaged<TimerFiring>.fromOpaque(userData).release()
      })
  }

  /// Wraps g_source_remove.
  func cancel() {
    if sourceID != 0 {
      g_source_remove(sourceID)
      sourceID = 0
    }
  }
}

/// What a pending timeout source holds: a weak reference, so a released timer never fires.
final class TimerFiring {
  weak var timer: Timer?
  init(timer: Timer) { self.timer = timer }
}
