import SharedState
import Synchronization

/// A key's watch on its collection. When it cannot start (the provider was down when the first
/// handle was made), it is tried again each time the key next reaches the provider, so live
/// changes resume once the provider is back.
final class ChangeWatch: Sendable {
  private struct State {
    var onChange: (@Sendable () -> Void)?
    var subscription: SharedSubscription?
  }

  private let state = Mutex(State())
  private let start: @Sendable (_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription

  init(start: @escaping @Sendable (_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription) {
    self.start = start
  }

  /// Starts watching; returns why it could not, in which case it is retried later.
  func begin(onChange: @escaping @Sendable () -> Void) -> (any Error)? {
    state.withLock { $0.onChange = onChange }
    return retryIfNeeded()
  }

  /// Starts the watch if one is wanted and not running.
  @discardableResult
  func retryIfNeeded() -> (any Error)? {
    state.withLock { state in
      guard let onChange = state.onChange, state.subscription == nil else { return nil }
      do {
        state.subscription = try start(onChange)
        return nil
      } catch {
        return error
      }
    }
  }

  func end() {
    let subscription = state.withLock { state in
      state.onChange = nil
      return state.subscription.take()
    }
    subscription?.cancel()
  }
}
