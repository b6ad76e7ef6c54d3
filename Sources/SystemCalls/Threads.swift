// Threads of our own, for work that must stay off Swift's cooperative pool.
import CSystemCalls
import Glibc

/// Starts detached threads. Wraps pthread_create.
package enum NativeThread {
  /// Runs `body` on a new detached thread named `name`, what ps, top, gdb and /proc show (Linux
  /// keeps its first 15 bytes); the process stops if no thread can be started, as with
  /// Foundation's `Thread.start()`, and `name` says which thread in that message.
  package static func detach(name: String, _ body: @escaping @Sendable () -> Void) {
    let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
      &thread, nil,
      { box in
        guard let box else { return nil }
        let body = Unmanaged<Body>.fromOpaque(box).takeRetainedValue()
        // A name is only a label: a thread that cannot take one runs all the same.
        _ = secretd_set_thread_name(body.name)
        body.run()
        return nil
      }, box)
    guard result == 0 else { fatalError("cannot start thread \(name): \(Errno(code: result))") }
    pthread_detach(thread)
  }

  /// Sleeps the calling thread for `milliseconds`. Wraps nanosleep(2).
  package static func sleep(milliseconds: Int) {
    var left = timespec(tv_sec: milliseconds / 1000, tv_nsec: milliseconds % 1000 * 1_000_000)
    var asked = left
    while nanosleep(&asked, &left) != 0 && errno == EINTR { asked = left }
  }

  private final class Body: Sendable {
    let name: String
    let run: @Sendable () -> Void

    init(name: String, run: @escaping @Sendable () -> Void) {
      self.name = name
      self.run = run
    }
  }
}

/// The processors this process may run on.
package enum Processors {
  /// How many are online. Wraps sysconf(_SC_NPROCESSORS_ONLN).
  package static var online: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}

/// A counting semaphore. Wraps sem_init, sem_post, sem_wait.
package final class NativeSemaphore: @unchecked Sendable {
  // SAFETY: the sem_t lives in memory allocated once here and freed only in deinit, so its
  // address never moves; POSIX makes sem_post and sem_wait safe to call from any thread.
  private let semaphore: UnsafeMutablePointer<sem_t>

  package init(value: UInt32 = 0) {
    semaphore = .allocate(capacity: 1)
    sem_init(semaphore, 0, value)
  }

  deinit {
    sem_destroy(semaphore)
    semaphore.deallocate()
  }

  package func signal() { sem_post(semaphore) }

  /// Waits for a signal, retrying when a signal handler interrupts the wait.
  package func wait() {
    _ = try? retryingOnInterrupt { sem_wait(semaphore) }
  }
}
