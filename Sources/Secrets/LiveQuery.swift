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
    /// A refresh is queued and has not started: another one would search for nothing more.
    var refreshQueued = false
    /// Searches are numbered as they start; a result older than the one last taken is dropped
    /// (the first load on the declaring thread may finish after a refresh that began later).
    var searchesStarted: UInt64 = 0
    var lastTaken: UInt64 = 0
    /// The last result taken, in path order, and whether the last search failed.
    var lastFound: [SecretSearch.FoundItem]?
    var lastFailed = false
  }

  let query: Query
  /// How the environment's store searches; nil when it cannot (every search is then an error).
  let itemSearch: SecretSearch?
  /// The store's owner: queries share a value only over one store.
  let owner: ObjectIdentifier
  private let refreshWindow: Duration
  private let clock: WriteClock
  private let reportIssue: @Sendable (String) -> Void
  private let makeValue: @Sendable ([SecretSearch.FoundItem]) throws -> Value
  private let state = Mutex(State())
  /// Searches run here, in turn, off Swift's cooperative pool (each one blocks on the bus).
  private let searches = DispatchQueue(label: "Secrets.LiveQuery")
  private let onSearches = DispatchSpecificKey<Bool>()

  init(
    _ query: Query, refreshWindow: Duration, environment: SharedEnvironment,
    makeValue: @escaping @Sendable ([SecretSearch.FoundItem]) throws -> Value
  ) {
    self.query = query
    itemSearch = environment.secretKeyStore.search
    owner = environment.secretKeyStore.owner
    self.refreshWindow = refreshWindow
    self.clock = environment.writeClock
    self.reportIssue = environment.reportIssue
    self.makeValue = makeValue
    searches.setSpecific(key: onSearches, value: true)
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
      guard state.watchWanted, state.watch == nil, let itemSearch else { return nil }
      do {
        state.watch = try itemSearch.watch(query.collection) { [weak self] in self?.changeNoticed() }
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
    guard itemSearch?.isInMemory != true else {
      // A write made by code that observes this query reaches here on the searches queue.
      return DispatchQueue.getSpecific(key: onSearches) == true ? refresh() : searches.sync { refresh() }
    }
    let searchNow = state.withLock { state in
      defer { state.windowOpen = true }
      state.changedInWindow = state.windowOpen
      return !state.windowOpen
    }
    if searchNow { searchAndOpenWindow() }
  }

  private func searchAndOpenWindow() {
    let queue = state.withLock { state in
      defer { state.refreshQueued = true }
      return !state.refreshQueued
    }
    if queue {
      searches.async {
        self.state.withLock { $0.refreshQueued = false }
        self.refresh()
      }
    }
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
    guard state.withLock({ $0.subscriber }) != nil else { return }
    let (found, isNews) = searchAndTake()
    guard isNews, let subscriber = state.withLock({ $0.subscriber }) else { return }
    subscriber.yield(with: found.flatMap { items in Result { try makeValue(items) } })
  }

  /// One search, made into the value.
  private func search() -> Result<Value?, any Error> {
    searchAndTake().found.flatMap { items in Result { try makeValue(items) } }
  }

  /// Searches, and takes the result unless a search that started later was taken first (then
  /// that one's result stands). Returns what stands and whether it differs from the last.
  private func searchAndTake() -> (found: Result<[SecretSearch.FoundItem], any Error>, isNews: Bool) {
    let ticket = state.withLock {
      $0.searchesStarted += 1
      return $0.searchesStarted
    }
    let found = Result { () throws -> [SecretSearch.FoundItem] in
      guard let itemSearch else { throw SecretKeyError.searchUnsupported }
      return try itemSearch.search(query.attributes, query.collection, query.includeSecrets)
    }.map { $0.sorted { $0.item.path < $1.item.path } }
    let taken = state.withLock { state -> (Result<[SecretSearch.FoundItem], any Error>, Bool) in
      if ticket < state.lastTaken, let newer = state.lastFound { return (.success(newer), false) }
      state.lastTaken = ticket
      switch found {
      case .failure:
        state.lastFailed = true
        return (found, true)
      case .success(let items):
        defer {
          state.lastFound = items
          state.lastFailed = false
        }
        return (found, state.lastFailed || state.lastFound != items)
      }
    }
    if case .success = found { startWatchIfWanted() }
    return taken
  }
}
