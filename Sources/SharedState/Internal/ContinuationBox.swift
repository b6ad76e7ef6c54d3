import Synchronization

/// The exactly-once guard behind ``LoadContinuation`` and ``SaveContinuation``.
final class ContinuationBox<Success: Sendable>: Sendable {
  private let state = Atomic<Bool>(false)
  private let kind: String
  private let description: String
  private let reportIssue: @Sendable (String) -> Void
  private let callback: @Sendable (Result<Success, any Error>) -> Void
  /// What the callback receives when the continuation is released unresumed, and what the
  /// report says that means.
  private let whenDropped: (result: Result<Success, any Error>, meaning: String)

  init(
    kind: String, description: String, reportIssue: @escaping @Sendable (String) -> Void,
    whenDropped: (result: Result<Success, any Error>, meaning: String),
    callback: @escaping @Sendable (Result<Success, any Error>) -> Void
  ) {
    self.kind = kind
    self.description = description
    self.reportIssue = reportIssue
    self.whenDropped = whenDropped
    self.callback = callback
  }

  func resume(_ result: Result<Success, any Error>) {
    let (exchanged, _) = state.compareExchange(
      expected: false, desired: true, ordering: .acquiringAndReleasing)
    guard exchanged else {
      reportIssue("\(kind) for \(description) was resumed more than once; later results are ignored.")
      return
    }
    callback(result)
  }

  deinit {
    if !state.load(ordering: .acquiring) {
      reportIssue(
        "\(kind) for \(description) was released without being resumed; \(whenDropped.meaning) "
          + "The key must resume its continuation exactly once.")
      callback(whenDropped.result)
    }
  }
}
