import Dispatch
import Synchronization

/// The reference every handle of one stored value points to.
///
/// The value lives in a ``ValueCell``, behind its `Mutex`; `withLock` runs the caller's body
/// under it (observers told before the lock is taken and after it is released), then asks the
/// key to save (`.didSet`) outside it. Values reach the key's `save` in version order, one
/// caller at a time (see ``SaveTurn``), and no lock is held while the key works. Observation
/// goes through the cell's `ObservationRegistrar` and through `AsyncStream`s fed under the lock,
/// in mutation order.
///
/// The rules of its results are swift-sharing's: a load that finds nothing gives the declared
/// default (an explicit `load()` keeps the value); a failure keeps the value and sets
/// `loadError`; a success, a successful save or a value pushed by the key clears `loadError`,
/// and anything the key pushes ends the loading it announced.
@usableFromInline
final class SharedReference<Value: Sendable>: MutableBox {
  typealias Loader = @Sendable (LoadContext<Value>, LoadContinuation<Value>) -> Void
  typealias Saver = @Sendable (Value, SaveContext, SaveContinuation) -> Void
  typealias Subscriber = @Sendable (LoadContext<Value>, SharedSubscriber<Value>) -> SharedSubscription

  /// The default declared by the first handle; a load that finds nothing goes back to it.
  let initialValue: Value
  /// The key, as swift-sharing describes it; nil for a value shared without a key.
  let keyDescription: String?
  let registryKey: ReferenceKey?
  private let loader: Loader?
  let saver: Saver?
  private let subscriber: Subscriber?
  let reportIssue: @Sendable (String) -> Void
  /// The value with its lock and observers. ``Shared`` runs mutations on it directly, then asks
  /// this reference to save them.
  @usableFromInline let cell: ValueCell<Value>
  let saveTurn = Mutex(SaveTurn())
  private let subscription = Mutex<SharedSubscription?>(nil)

  /// A reference with no key (`Shared(value:)`).
  init(value: Value) {
    initialValue = value
    keyDescription = nil
    registryKey = nil
    loader = nil
    saver = nil
    subscriber = nil
    reportIssue = SharedEnvironment.current.reportIssue
    cell = ValueCell(value: value, savesMutations: false)
  }

  init(
    initialValue: Value, keyDescription: String, registryKey: ReferenceKey,
    loader: @escaping Loader, saver: Saver?, subscriber: @escaping Subscriber
  ) {
    self.initialValue = initialValue
    self.keyDescription = keyDescription
    self.registryKey = registryKey
    self.loader = loader
    self.saver = saver
    self.subscriber = subscriber
    reportIssue = SharedEnvironment.current.reportIssue
    cell = ValueCell(value: initialValue, savesMutations: saver != nil)
  }

  deinit {
    // No stream is left to finish: each one's termination handler keeps the reference alive.
    subscription.withLock { $0 }?.cancel()
    if let registryKey { ReferenceRegistry.shared.removeIfReleased(registryKey) }
  }

  /// Subscribes to the key and runs the first load (unless the value was loaded already). Called
  /// once, before any other handle can reach the reference, with no lock held: it runs the key.
  func start(skipLoad: Bool) {
    guard let loader, let subscriber else { return }
    let context = LoadContext.initialValue(initialValue)
    let handle = subscriber(
      context,
      SharedSubscriber(
        callback: { [weak self] result in self?.apply(result, endingSubscriberLoading: true) },
        onLoading: { [weak self] loading in self?.setSubscriberLoading(loading) },
        localChanges: LocalChanges(
          mark: { [weak self] in self?.savedVersion() },
          applyUnlessChanged: { [weak self] result, version in
            self?.apply(result, endingSubscriberLoading: true, ifStillAt: version)
          })
      ))
    subscription.withLock { $0 = handle }
    guard !skipLoad else { return }
    beginLoad()
    loader(
      context,
      LoadContinuation(continuationDescription, reportIssue: reportIssue) { [weak self] result in
        self?.endLoad(with: result)
      })
  }

  /// What the continuations' messages call the key.
  var continuationDescription: String { keyDescription ?? description }

  // MARK: Reading

  var value: Value {
    if let snapshot = ChangeTracking.assertedSnapshot(of: self) { return snapshot }
    return cell.value
  }
  var loadError: (any Error)? { cell.loadError }
  var saveError: (any Error)? { cell.saveError }
  var isLoading: Bool { cell.isLoading }

  var description: String { keyDescription ?? "value: \(String(reflecting: cell.state.withLock { $0.value }))" }

  var identity: HandleIdentity { HandleIdentity(root: self) }

  func values() -> AsyncStream<Value> {
    AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
      let id = cell.state.withLock { state in
        state.nextStreamID += 1
        state.streams[state.nextStreamID] = continuation
        continuation.yield(state.value)
        return state.nextStreamID
      }
      // Iterating keeps the reference alive; ending the iteration releases it.
      continuation.onTermination = { _ in
        _ = self.cell.state.withLock { $0.streams.removeValue(forKey: id) }
      }
    }
  }

  // MARK: Mutating

  func withLock<R, E: Error>(at site: MutationSite?, _ body: (inout Value) throws(E) -> R) throws(E) -> R {
    if ChangeTracking.mayBeActive { return try withLockTracked(at: site, body) }
    defer { if cell.savesMutations { saveAfterMutation() } }
    return try cell.withLock(body)
  }

  // MARK: Loading

  /// Reloads (`.userInitiated`); nothing stored keeps the value. The key is asked on a dispatch
  /// thread: it may read its store on the calling thread, and that must not be one of the
  /// cooperative pool's. Its result is applied before this returns.
  func load() async throws {
    guard let loader else { return }
    beginLoad()
    let (description, reportIssue) = (continuationDescription, reportIssue)
    try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
      DispatchQueue.global().async {
        loader(
          .userInitiated,
          LoadContinuation(description, reportIssue: reportIssue) { [weak self] result in
            self?.endLoad(with: result, keepingValueIfAbsent: true)
            waiter.resume(with: result.map { _ in () })
          })
      }
    }
  }

  private func beginLoad() {
    cell.change(.isLoading) { $0.loadsInFlight += 1 }
  }

  private func endLoad(with result: Result<Value?, any Error>, keepingValueIfAbsent: Bool = false) {
    cell.change(.isLoading) { $0.loadsInFlight -= 1 }
    if keepingValueIfAbsent, case .success(nil) = result {
      apply(.success(cell.state.withLock { $0.value }))
    } else {
      apply(result)
    }
  }

  private func setSubscriberLoading(_ loading: Bool) {
    cell.change(.isLoading) { $0.subscriberLoading = loading }
  }

  /// The version of the value when every mutation has reached the key; nil while one has not.
  private func savedVersion() -> UInt64? {
    let saved = saveTurn.withLock { $0.taken ? nil : $0.savedVersion }
    let version = cell.state.withLock { $0.version }
    return saver == nil || saved == version ? version : nil
  }

  /// Absent → the declared default, no error; failure → error kept, value kept; success → the
  /// value, error cleared, unless the value was mutated since `version`. A result the key
  /// pushes also ends the loading it announced.
  private func apply(
    _ result: Result<Value?, any Error>, endingSubscriberLoading: Bool = false, ifStillAt version: UInt64? = nil
  ) {
    if endingSubscriberLoading, cell.state.withLock({ $0.subscriberLoading }) { setSubscriberLoading(false) }
    switch result {
    case .success(let loaded):
      let newValue = loaded ?? initialValue
      cell.change(.value, .loadError) { state in
        guard version == nil || state.version == version else { return }
        state.value = newValue
        state.loadError = nil
        state.yieldToStreams()
      }
    case .failure(let error):
      cell.change(.loadError) { $0.loadError = error }
    }
  }

  // MARK: Saving

  /// Records a save's outcome: a success clears both errors (the value the key holds is the
  /// one shown), a failure becomes `saveError`.
  func endSave(with result: Result<Void, any Error>) {
    switch result {
    case .success:
      // Common case: no error to clear; skip the observers.
      guard cell.state.withLock({ $0.saveError != nil || $0.loadError != nil }) else { return }
      cell.change(.saveError, .loadError) { state in
        state.saveError = nil
        state.loadError = nil
      }
    case .failure(let error):
      cell.change(.saveError) { $0.saveError = error }
    }
  }
}
