// Locks for state that several threads reach: a mutex, a mutex with a condition, and a
// readers-writer lock. Wraps pthread_mutex_*, pthread_cond_* and pthread_rwlock_*.
import Glibc

/// Runs one body at a time. Unlike `Mutex`, it guards no value, so a body may return
/// non-`Sendable` results: what it protects is the state the caller reaches inside.
package final class SerialLock: @unchecked Sendable {
  // SAFETY: the pthread mutex lives at a fixed address allocated here and freed in deinit.
  fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

  /// Wraps pthread_mutex_init.
  package init() {
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
  package func run<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }
}

/// A mutex with a condition variable, for threads that wait for work.
package final class WaitableLock: @unchecked Sendable {
  // SAFETY: as for SerialLock; the condition variable is only used with this lock's mutex.
  private let lock = SerialLock()
  private let condition: UnsafeMutablePointer<pthread_cond_t>

  /// Wraps pthread_cond_init.
  package init() {
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    pthread_cond_init(condition, nil)
  }

  deinit {
    pthread_cond_destroy(condition)
    condition.deallocate()
  }

  package func run<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R { try lock.run(body) }

  /// Inside `run`: releases the lock until `signal()` wakes this thread. Wraps pthread_cond_wait.
  package func wait() { pthread_cond_wait(condition, lock.mutex) }

  /// Wakes one waiting thread. Wraps pthread_cond_signal.
  package func signal() { pthread_cond_signal(condition) }
}

/// Many readers at once, or one writer. Writers go first once they wait, so a stream of
/// readers cannot starve them. Wraps pthread_rwlock_*.
package final class ReadWriteLock: @unchecked Sendable {
  // SAFETY: the pthread rwlock lives at a fixed address allocated here and freed in deinit.
  private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>

  /// Wraps pthread_rwlockattr_setkind_np(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP).
  package init() {
    rwlock = .allocate(capacity: 1)
    rwlock.initialize(to: pthread_rwlock_t())
    var attributes = pthread_rwlockattr_t()
    pthread_rwlockattr_init(&attributes)
    pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
    pthread_rwlock_init(rwlock, &attributes)
    pthread_rwlockattr_destroy(&attributes)
  }

  deinit {
    pthread_rwlock_destroy(rwlock)
    rwlock.deallocate()
  }

  /// Wraps pthread_rwlock_rdlock.
  package func reading<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_rwlock_rdlock(rwlock)
    defer { pthread_rwlock_unlock(rwlock) }
    return try body()
  }

  /// Runs `body` as a reader if no writer holds or waits for the lock; nil, without waiting,
  /// otherwise. Wraps pthread_rwlock_tryrdlock.
  package func tryReading<R>(_ body: () -> R) -> R? {
    guard pthread_rwlock_tryrdlock(rwlock) == 0 else { return nil }
    defer { pthread_rwlock_unlock(rwlock) }
    return body()
  }

  /// Wraps pthread_rwlock_wrlock.
  package func writing<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_rwlock_wrlock(rwlock)
    defer { pthread_rwlock_unlock(rwlock) }
    return try body()
  }
}
