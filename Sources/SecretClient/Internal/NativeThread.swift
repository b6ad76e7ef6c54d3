// Detached threads and a counting semaphore, over GLib's threads and POSIX semaphores: the two
// things SecretClient needed Foundation's `Thread` and Dispatch's `DispatchSemaphore` for.
// Foundation pulls in CoreFoundation and ICU, which cost secretctl milliseconds at every start.
import CLibSecret
import Glibc

enum NativeThread {
  /// Starts a detached thread that runs `body`. The process aborts if the thread cannot be
  /// started, as with `Thread.start()`. `name` shows in `ps -T` and debuggers (Linux keeps 15
  /// bytes). Wraps `g_thread_new` (a pthread that GLib names) and `g_thread_unref` (detaches it).
  static func detach(name: String, _ body: @escaping @Sendable () -> Void) {
    let box = Unmanaged.passRetained(Body(body)).toOpaque()
    let thread = g_thread_new(
      name,
      { box in
        if let box { Unmanaged<Body>.fromOpaque(box).takeRetainedValue().run() }
        return nil
      }, box)
    g_thread_unref(thread)
  }

  private final class Body: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
}

/// A counting semaphore. Wraps `sem_init`, `sem_post`, `sem_wait`.
final class NativeSemaphore: @unchecked Sendable {
  // SAFETY: the sem_t lives in memory allocated once here and freed only in deinit, so its
  // address never moves; POSIX makes sem_post and sem_wait safe to call from any thread.
  private let semaphore: UnsafeMutablePointer<sem_t>

  init(value: UInt32 = 0) {
    semaphore = .allocate(capacity: 1)
    sem_init(semaphore, 0, value)
  }

  deinit {
    sem_destroy(semaphore)
    semaphore.deallocate()
  }

  func signal() { sem_post(semaphore) }

  /// Waits for a signal, retrying when a signal handler interrupts the wait.
  func wait() {
    while sem_wait(semaphore) != 0, errno == EINTR {}
  }
}
