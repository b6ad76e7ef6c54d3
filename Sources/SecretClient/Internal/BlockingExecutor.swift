import Synchronization
import SystemCalls

/// Dedicated threads for libsecret's blocking calls.
///
/// libsecret's `_sync` functions iterate a private main loop until the D-Bus reply arrives, which
/// can take as long as a prompt or a frozen provider. Running them on Swift's cooperative pool
/// (two threads on a two-core machine) would stall every other task, so `async` calls hop here.
/// A thread is added whenever the queued jobs outnumber the idle threads, up to `maximumThreads`,
/// so one slow provider cannot hold up calls to another; idle threads wait for the next job.
final class BlockingExecutor: Sendable {
  static let shared = BlockingExecutor()

  private struct State {
    var jobs: [@Sendable () -> Void] = []
    var idle = 0
    var busy = 0
    var threads: Int { idle + busy }
  }

  private let maximumThreads = 64
  private let state = Mutex(State())
  private let wakeUp = NativeSemaphore()

  private init() {}

  /// Runs `body` on one of the dedicated threads and resumes the caller with its result.
  func run<T: Sendable>(_ body: @escaping @Sendable () throws(SecretError) -> T) async throws(SecretError) -> T {
    let result: Result<T, SecretError> = await withCheckedContinuation { continuation in
      enqueue { continuation.resume(returning: Result { () throws(SecretError) in try body() }) }
    }
    return try result.get()
  }

  private func enqueue(_ job: @escaping @Sendable () -> Void) {
    let startThread = state.withLock { state in
      state.jobs.append(job)
      guard state.idle < state.jobs.count, state.threads < maximumThreads else { return false }
      state.idle += 1
      return true
    }
    if startThread {
      NativeThread.detach(name: SecretClient.blockingThreadName) { [self] in work() }
    }
    wakeUp.signal()
  }

  private func work() -> Never {
    while true {
      wakeUp.wait()
      let job = state.withLock { state -> (@Sendable () -> Void)? in
        guard !state.jobs.isEmpty else { return nil }
        state.idle -= 1
        state.busy += 1
        return state.jobs.removeFirst()
      }
      guard let job else { continue }
      job()
      state.withLock { state in
        state.busy -= 1
        state.idle += 1
      }
    }
  }
}

extension SecretClient {
  /// The name of the threads that run blocking calls, as ps, gdb and /proc show it; the test that
  /// the pool stays free counts them.
  package static let blockingThreadName = "secret-blocking"
}
