import Dispatch
import SharedState
import Synchronization

/// A search of one collection kept up to date for the keys of live queries. The first change
/// signal is searched at once and opens a window; the signals that arrive while it is open are
/// answered by one search when it closes (which opens the next). A burst therefore costs at
/// most one search per window however many writes it holds, and a lone change is seen at the
/// speed of one search. A result equal to the last one is not given again; an error is given
/// (the last value stays) until a search succeeds.
final class LiveQuery<Value: Sendable>: Sendable {
  struct Query: Hashable, Sendable {
    var attributes: [String: String]
    var collection: CollectionID
    var includeSecrets: Bool
  }

  private struct State {
    var subscriber: SharedSubscriber<Value>?
    var watch: SharedSubscription?
    /// Watching could not start (the provider was gone): tried again after the next search.
    var watchWanted = false
    /// A search was made for a change less than a window ago.
    var windowOpen = false
    /// A change was signalled while the window was open: searched when it closes.
    var changedInWindow = false
    var windowTimer: SharedSubscription?
    var lastFound: [SecretStorage.FoundItem]?
    var lastFailed = false
  }

  let query: Query
  let storage: SecretStorage
  private let refreshWindow: Duration
  private let clock: WriteClock
  private let reportIssue: @Sendable (String) -> Void
  private let makeValue: @Sendable ([SecretStorage.FoundItem]) throws -> Value
  private let state = Mutex(State())
  /// Searches run here, in turn, off Swift's cooperative pool (each one blocks on the bus).
  private let searches = DispatchQueue(label: "Secrets.LiveQuery")

  init(
    _ query: Query, refreshWindow: Duration, environment: SharedEnvironment,
    makeValue: @escaping @Sendable ([SecretStorage.FoundItem]) throws -> Value
  ) {
    self.query = query
    self.storage = environment.secretStorage
    self.refreshWindow = refreshWindow
    self.clock = environment.writeClock
    self.reportIssue = environment.reportIssue
    self.makeValue = makeValue
  }

  /// The first load searches at once, on the declaring thread; an explicit `load()` in turn
  /// with the searches that change signals cause.
  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    switch context {
    case .initialValue: continuation.resume(with: search())
    case .userInitiated: searches.async { [self] in continuation.resume(with: search()) }
    }
  }

  func subscribe(subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    state.withLock {
      $0.subscriber = subscriber
      $0.watchWanted = true
    }
    startWatchIfWanted()
    return SharedSubscription { [self] in
      let (watch, window) = state.withLock { state in
        state.subscriber = nil
        state.watchWanted = false
        state.windowOpen = false
        return (state.watch.take(), state.windowTimer.take())
      }
      watch?.cancel()
      window?.cancel()
    }
  }

  private func startWatchIfWanted() {
    let failure = state.withLock { state -> (any Error)? in
      guard state.watchWanted, state.watch == nil else { return nil }
      do {
        state.watch = try storage.watch(query.collection) { [weak self] _ in self?.changeNoticed() }
        return nil
      } catch SecretError.serviceUnavailable {
        return nil
      } catch {
        state.watchWanted = false
        return error
      }
    }
    if let failure { reportIssue("Changes to the items of \(query.collection) will not be seen: \(failure)") }
  }

  /// Searches at once unless a window is open; in memory, before returning.
  private func changeNoticed() {
    guard !storage.isInMemory else { return searches.sync { refresh() } }
    let searchNow = state.withLock { state in
      defer { state.windowOpen = true }
      state.changedInWindow = state.windowOpen
      return !state.windowOpen
    }
    if searchNow { searchAndOpenWindow() }
  }

  private func searchAndOpenWindow() {
    searches.async { self.refresh() }
    let timer = clock.schedule(refreshWindow) { [weak self] in self?.windowClosed() }
    state.withLock { state in
      if state.windowOpen { state.windowTimer = timer }
    }
  }

  /// The changes signalled while the window was open get their search, which opens the next one.
  private func windowClosed() {
    let searchNow = state.withLock { state in
      defer { state.changedInWindow = false }
      state.windowOpen = state.changedInWindow
      state.windowTimer = nil
      return state.changedInWindow
    }
    if searchNow { searchAndOpenWindow() }
  }

  private func refresh() {
    guard let subscriber = state.withLock({ $0.subscriber }) else { return }
    let found = Result { try storage.search(query.attributes, query.collection, query.includeSecrets) }
    let isNews = state.withLock { state -> Bool in
      switch found {
      case .failure:
        state.lastFailed = true
        return true
      case .success(let items):
        defer {
          state.lastFound = items
          state.lastFailed = false
        }
        return state.lastFailed || state.lastFound != items
      }
    }
    if case .success = found { startWatchIfWanted() }
    guard isNews else { return }
    subscriber.yield(with: found.flatMap { items in Result { try makeValue(items) } })
  }

  /// One search, made into the value.
  private func search() -> Result<Value?, any Error> {
    let found = Result { try storage.search(query.attributes, query.collection, query.includeSecrets) }
    if case .success(let items) = found {
      state.withLock {
        $0.lastFound = items
        $0.lastFailed = false
      }
      startWatchIfWanted()
    }
    return found.flatMap { items in Result { try makeValue(items) } }
  }
}
