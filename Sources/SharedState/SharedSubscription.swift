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

  /// Creates a subscriber from callbacks (used by tests and by keys that wrap other keys).
  ///
  /// - Parameters:
  ///   - callback: Receives values (`nil` means "back to the declared default") or errors.
  ///   - onLoading: Receives loading state changes.
  public init(
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void,
    onLoading: (@Sendable (Bool) -> Void)? = nil
  ) {
    self.callback = callback
    self.onLoading = onLoading ?? { _ in }
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
