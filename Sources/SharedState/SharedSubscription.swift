import Synchronization

/// The channel a ``SharedReaderKey`` uses to push changes made outside the process.
///
/// ```swift
/// func subscribe(
///   context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
/// ) -> SharedSubscription {
///   let watcher = source.observe { result in subscriber.yield(with: result) }
///   return SharedSubscription { watcher.stop() }
/// }
/// ```
public struct SharedSubscriber<Value: Sendable>: Sendable {
  let callback: @Sendable (Result<Value?, any Error>) -> Void
  let onLoading: @Sendable (Bool) -> Void
  /// Set when a shared reference subscribes, so that a persistent key applies what it read
  /// only if the value did not change in this process meanwhile.
  let localChanges: LocalChanges<Value>?

  /// Creates a subscriber from callbacks (used by tests and by keys that wrap other keys).
  ///
  /// - Parameters:
  ///   - callback: Receives values (`nil` means "back to the declared default") or errors.
  ///   - onLoading: Receives loading state changes.
  public init(
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void,
    onLoading: (@Sendable (Bool) -> Void)? = nil
  ) {
    self.init(callback: callback, onLoading: onLoading, localChanges: nil)
  }

  init(
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void,
    onLoading: (@Sendable (Bool) -> Void)?,
    localChanges: LocalChanges<Value>?
  ) {
    self.callback = callback
    self.onLoading = onLoading ?? { _ in }
    self.localChanges = localChanges
  }

  /// Pushes a new value.
  public func yield(_ value: Value) { callback(.success(value)) }

  /// Pushes an error: it becomes `loadError`, the value is kept.
  public func yield(throwing error: any Error) { callback(.failure(error)) }

  /// Pushes a result: `.success(nil)` means nothing is stored any more.
  public func yield(with result: Result<Value?, any Error>) { callback(result) }

  /// Says nothing is stored any more: the value goes back to the declared default.
  public func yieldReturningInitialValue() { callback(.success(nil)) }

  /// Reports whether the external system is loading.
  public func yieldLoading(_ isLoading: Bool = true) { onLoading(isLoading) }

  /// Where the subscribed value stands now: `nil` while a change made in this process has not
  /// reached the key yet (it will overwrite the store), else a mark to pass to
  /// ``yield(with:unlessChangedSince:)``.
  func localMark() -> LocalMark? {
    guard let localChanges else { return LocalMark(version: nil) }
    return localChanges.mark().map { LocalMark(version: $0) }
  }

  /// Pushes `result` unless the value changed in this process since `mark` was taken: a value
  /// read before that change must not replace it.
  func yield(with result: Result<Value?, any Error>, unlessChangedSince mark: LocalMark) {
    guard let version = mark.version, let localChanges else { return callback(result) }
    localChanges.applyUnlessChanged(result, version)
  }
}

/// How a persistent key asks a shared reference about changes made in this process.
struct LocalChanges<Value: Sendable>: Sendable {
  /// The version of the value, or nil while a change has not reached the key yet.
  let mark: @Sendable () -> UInt64?
  /// Applies a result only if the value is still at the given version.
  let applyUnlessChanged: @Sendable (Result<Value?, any Error>, UInt64) -> Void
}

/// A subscribed value's version when a key began to read its store.
struct LocalMark: Sendable {
  /// Nil for a subscriber that is not a shared reference (nothing to check).
  let version: UInt64?
}

/// A handle that stops a key's updates.
///
/// The cancel closure runs at most once: on the first ``cancel()`` or when the subscription is
/// released, whichever comes first.
public final class SharedSubscription: Sendable {
  private let onCancel: Mutex<(@Sendable () -> Void)?>

  /// Creates a subscription.
  ///
  /// - Parameter cancel: Runs once, on ``cancel()`` or release.
  public init(_ cancel: @escaping @Sendable () -> Void) {
    onCancel = Mutex(cancel)
  }

  deinit { cancel() }

  /// Stops the updates. Later calls do nothing.
  public func cancel() {
    let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
      defer { action = nil }
      return action
    }
    action?()
  }
}
