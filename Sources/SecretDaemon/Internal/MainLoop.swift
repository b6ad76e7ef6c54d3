// The GLib main loop, signal sources and timers. Wraps g_main_loop_*, g_unix_signal_add, g_timeout_add.
import CGio
import Synchronization
package import SystemCalls

/// The daemon's event loop on the default main context.
package final class MainLoop {
  private let raw: OpaquePointer
  private var handlers: [Callback] = []

  package init() {
    raw = g_main_loop_new(nil, 0)
  }

  deinit { g_main_loop_unref(raw) }

  /// Runs until `quit()`. Wraps g_main_loop_run.
  package func run() { g_main_loop_run(raw) }

  /// Wraps g_main_loop_quit.
  package func quit() { g_main_loop_quit(raw) }

  /// Calls `handler` on the loop when `signal` arrives. Wraps g_unix_signal_add.
  package func onSignal(_ signal: Signal, _ handler: @escaping () -> Void) {
    let callback = Callback(handler)
    handlers.append(callback)
    _ = g_unix_signal_add(
      signal.rawValue,
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
///
/// `schedule` and `cancel` may be called from any thread (the daemon re-arms expiry from GDBus's
/// worker thread); the pending source id sits behind a `Mutex`, and the callback runs on the main
/// context.
final class Timer {
  private let sourceID = Mutex<UInt32>(0)
  private let callback: Callback

  init(_ body: @escaping () -> Void) { callback = Callback(body) }

  deinit { cancel() }

  /// Fires once after `milliseconds`, replacing any pending firing. Wraps g_timeout_add_full.
  func schedule(afterMilliseconds milliseconds: UInt32) {
    sourceID.withLock { current in
      if current != 0 { g_source_remove(current) }
      let firing = TimerFiring(timer: self)
      current = g_timeout_add_full(
        0, milliseconds,
        { userData in
          guard let userData else { return 0 }
          let firing = Unmanaged<TimerFiring>.fromOpaque(userData).takeUnretainedValue()
          firing.timer?.fire(firing)
          return 0  // G_SOURCE_REMOVE
        }, Unmanaged.passRetained(firing).toOpaque(),
        { userData in
          guard let userData else { return }
          Unmanaged<TimerFiring>.fromOpaque(userData).release()
        })
      firing.id = current
    }
  }

  /// Runs the callback unless `firing` was replaced or cancelled meanwhile.
  fileprivate func fire(_ firing: TimerFiring) {
    let current = sourceID.withLock { current -> Bool in
      guard current == firing.id else { return false }
      current = 0
      return true
    }
    if current { callback.body() }
  }

  /// Wraps g_source_remove.
  func cancel() {
    sourceID.withLock { current in
      if current != 0 {
        g_source_remove(current)
        current = 0
      }
    }
  }
}

/// What a pending timeout source holds: a weak reference, so a released timer never fires, and
/// its own source id, so a replaced firing does nothing.
final class TimerFiring {
  weak var timer: Timer?
  /// Set under the timer's lock right after the source is added, before it can fire.
  var id: UInt32 = 0
  init(timer: Timer) { self.timer = timer }
}
