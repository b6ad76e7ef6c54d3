// A store's change watch, begun when the first subscriber arrives and retried after a failure.
import Synchronization

/// A value's watch on its store. When it cannot start yet (a folder not made, a service down),
/// it is tried again each time the value next reaches the store.
final class StoreWatch: Sendable {
  private struct State {
    var onChange: (@Sendable () -> Void)?
    var subscription: SharedSubscription?
    /// Watching failed for good; it was reported once.
    var failed = false
    /// Which `begin` the watch serves: an `end` for an earlier one leaves it alone.
    var generation: UInt64 = 0
  }

  private let state = Mutex(State())
  private let start: @Sendable (_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription?
  private let describe: @Sendable () -> String
  private let reportIssue: @Sendable (String) -> Void

  init<Store: PersistentStore>(store: Store, reportIssue: @escaping @Sendable (String) -> Void) {
    start = { try store.watch($0) }
    describe = { String(describing: store) }
    self.reportIssue = reportIssue
  }

  /// Starts watching, or waits for the next chance; the watch then serves this call only.
  /// Returns what `end` takes.
  func begin(onChange: @escaping @Sendable () -> Void) -> UInt64 {
    let generation = state.withLock { state in
      state.onChange = onChange
      state.generation += 1
      return state.generation
    }
    retryIfNeeded()
    return generation
  }

  /// Starts the watch if one is wanted and not running.
  func retryIfNeeded() {
    let failure = state.withLock { state -> (any Error)? in
      guard let onChange = state.onChange, state.subscription == nil, !state.failed else { return nil }
      do {
        state.subscription = try start(onChange)
        return nil
      } catch {
        state.failed = true
        return error
      }
    }
    if let failure { reportIssue("Changes to \(describe()) made elsewhere will not be seen: \(failure)") }
  }

  /// Stops the watch begun by the `begin` that returned `generation`, unless a later one took it.
  func end(_ generation: UInt64) {
    let subscription = state.withLock { state -> SharedSubscription? in
      guard state.generation == generation else { return nil }
      state.onChange = nil
      return state.subscription.take()
    }
    subscription?.cancel()
  }
}
