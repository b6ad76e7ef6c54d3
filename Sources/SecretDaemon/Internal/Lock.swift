// A plain mutex for state that two threads reach through C callbacks. Wraps pthread_mutex_*.
import Glibc

/// Runs one body at a time. Unlike `Mutex`, it guards no value, so a body may return
/// non-`Sendable` results: what it protects is the state the caller reaches inside.
final class SerialLock {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  /// Wraps pthread_mutex_init.
  init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  /// Wraps pthread_mutex_destroy.
  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Wraps pthread_mutex_lock and pthread_mutex_unlock.
  func run<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }
}
