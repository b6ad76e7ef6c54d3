/// The one-shot callback a ``SharedReaderKey`` resumes when a load finishes.
///
/// Resume it exactly once. Resuming twice, or dropping it without resuming, is a programming
/// error: it is reported through ``SharedEnvironment/reportIssue`` (a runtime warning on
/// standard error by default), never a crash. A continuation dropped unresumed ends the load as
/// if nothing were stored (the value is kept, as in swift-sharing), so `try await $x.load()`
/// does not hang.
///
/// ```swift
/// func load(context: LoadContext<Token?>, continuation: LoadContinuation<Token?>) {
///   do {
///     guard let bytes = try store.read() else { return continuation.resumeReturningInitialValue() }
///     continuation.resume(returning: try JSONDecoder().decode(Token?.self, from: bytes))
///   } catch {
///     continuation.resume(throwing: error)
///   }
/// }
/// ```
public struct LoadContinuation<Value: Sendable>: Sendable {
  let box: ContinuationBox<Value?>

  /// A continuation that hands the load's result to `callback` (to wrap another key, or to
  /// call a key's `load` directly in a test).
  ///
  /// - Parameters:
  ///   - description: What is being loaded, for the messages about misuse.
  ///   - callback: Receives the result once.
  public init(
    _ description: @autoclosure @escaping @Sendable () -> String = "",
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void
  ) {
    self.init(description(), reportIssue: SharedEnvironment.current.reportIssue, callback: callback)
  }

  init(
    _ description: String,
    reportIssue: @escaping @Sendable (String) -> Void = SharedEnvironment.current.reportIssue,
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void
  ) {
    box = ContinuationBox(
      kind: "LoadContinuation", description: description, reportIssue: reportIssue,
      whenDropped: (.success(nil), "the load ends as if nothing were stored."), callback: callback)
  }

  /// Ends the load with a value.
  public func resume(returning value: Value) { box.resume(.success(value)) }

  /// Ends the load with an error; the shared value is kept and the error becomes `loadError`.
  public func resume(throwing error: any Error) { box.resume(.failure(error)) }

  /// Ends the load with a result: `.success(nil)` means nothing is stored (the declared
  /// default is used, no error).
  public func resume(with result: Result<Value?, any Error>) { box.resume(result) }

  /// Ends the load saying nothing is stored: the value becomes the declared default.
  public func resumeReturningInitialValue() { box.resume(.success(nil)) }
}

/// The one-shot callback a ``SharedKey`` resumes when a save finishes.
///
/// Same rules as ``LoadContinuation``: exactly once; a second resume or a dropped continuation
/// is reported, never a crash or a hang. A save whose continuation is dropped fails with
/// ``SharedStateError/continuationNeverResumed(_:)``: nothing says the value was stored, so
/// `try await $x.save()` does not claim it was (swift-sharing reports success).
public struct SaveContinuation: Sendable {
  let box: ContinuationBox<Void>

  /// A continuation that hands the save's outcome to `callback`.
  ///
  /// - Parameters:
  ///   - description: What is being saved, for the messages about misuse.
  ///   - callback: Receives the outcome once.
  public init(
    _ description: @autoclosure @escaping @Sendable () -> String = "",
    callback: @escaping @Sendable (Result<Void, any Error>) -> Void
  ) {
    self.init(description(), reportIssue: SharedEnvironment.current.reportIssue, callback: callback)
  }

  init(
    _ description: String,
    reportIssue: @escaping @Sendable (String) -> Void = SharedEnvironment.current.reportIssue,
    callback: @escaping @Sendable (Result<Void, any Error>) -> Void
  ) {
    box = ContinuationBox(
      kind: "SaveContinuation", description: description, reportIssue: reportIssue,
      whenDropped: (
        .failure(SharedStateError.continuationNeverResumed("SaveContinuation for \(description)")),
        "the save fails with continuationNeverResumed."
      ), callback: callback)
  }

  /// Ends the save successfully.
  public func resume() { box.resume(.success(())) }

  /// Ends the save with an error; it becomes `saveError`.
  public func resume(throwing error: any Error) { box.resume(.failure(error)) }

  /// Ends the save with a result.
  public func resume(with result: Result<Void, any Error>) { box.resume(result) }
}
