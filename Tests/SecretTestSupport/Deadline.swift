import Synchronization

/// Thrown when an awaited event did not happen in time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
  public var description: String
}

/// Runs `body`, failing with `DeadlineExceeded` if it has not finished within `seconds`.
///
/// The deadline only bounds a wait for an event; it never stands in for one. It holds even when
/// `body` blocks its thread, provided another thread of Swift's pool is free to run the timer:
/// the caller is resumed at the deadline and `body` is cancelled.
public func withDeadline<T: Sendable>(
  seconds: Double, _ what: String = "operation", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
  let outcome = FirstOutcome<T>()
  return try await withCheckedThrowingContinuation { continuation in
    outcome.set(continuation)
    let work = Task {
      do { outcome.resume(.success(try await body())) } catch { outcome.resume(.failure(error)) }
    }
    Task {
      try? await Task.sleep(for: .seconds(seconds))
      outcome.resume(.failure(DeadlineExceeded(description: "\(what) did not finish within \(seconds) s")))
      work.cancel()
    }
  }
}

/// Waits, with a deadline, until `condition` holds; the condition is an event we cannot await.
public func eventually(
  _ what: String, seconds: Double = 10, _ condition: @escaping @Sendable () throws -> Bool
) async throws {
  try await withDeadline(seconds: seconds, what) {
    while try !condition() { try await Task.sleep(for: .milliseconds(10)) }
  }
}

/// Resumes a continuation with whichever outcome comes first, exactly once.
private final class FirstOutcome<T: Sendable>: Sendable {
  private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

  func set(_ continuation: CheckedContinuation<T, any Error>) {
    self.continuation.withLock { $0 = continuation }
  }

  func resume(_ result: Result<T, any Error>) {
    continuation.withLock { $0.take() }?.resume(with: result)
  }
}
