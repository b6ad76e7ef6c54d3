import CLibSecret
import Synchronization
import SystemCalls

/// A thread that iterates a GMainContext of its own.
///
/// GDBus delivers a signal subscription's callbacks on the main context that was the thread
/// default when the subscription was made. Subscribing from this thread gives them a context that
/// is always iterated, whatever the host process does with GLib's global default context.
final class SignalThread: @unchecked Sendable {
  // SAFETY: `context` is created once and never released (the thread lives as long as the
  // process); GMainContext is thread-safe for g_main_context_invoke from any thread.
  static let shared = SignalThread()

  private let context: OpaquePointer

  private init() {
    let context: OpaquePointer = g_main_context_new()
    self.context = context
    // Raw pointers are not Sendable; the address crosses to the new thread as an integer.
    let address = UInt(bitPattern: context)
    NativeThread.detach(name: "secret-signals") {
      let context = OpaquePointer(bitPattern: address)
      g_main_context_push_thread_default(context)
      let loop = g_main_loop_new(context, 0)
      g_main_loop_run(loop)
    }
  }

  /// Runs `body` on the signal thread, where its context is the thread default, and waits for it.
  func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = NativeSemaphore()
    let job = Job {
      result.withLock { $0 = body() }
      done.signal()
    }
    g_main_context_invoke_full(
      context, G_PRIORITY_DEFAULT,
      { data in
        if let data { Unmanaged<Job>.fromOpaque(data).takeRetainedValue().run() }
        return 0  // G_SOURCE_REMOVE
      },
      Unmanaged.passRetained(job).toOpaque(), nil)
    done.wait()
    return result.withLock { $0.unsafelyUnwrapped }
  }

  private final class Job: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
}
