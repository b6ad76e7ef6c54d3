import Synchronization

/// What ``SharedReader`` holds: a readable, observable, reloadable value.
protocol ReaderBox<Value>: AnyObject, Sendable {
  associatedtype Value: Sendable
  var value: Value { get }
  var loadError: (any Error)? { get }
  var isLoading: Bool { get }
  func load() async throws
  func values() -> AsyncStream<Value>
}

/// What ``Shared`` holds: a ``ReaderBox`` that can also be mutated and saved.
protocol MutableBox<Value>: ReaderBox {
  var saveError: (any Error)? { get }
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R
  func save() async throws
}

/// The reference every handle of one stored value points to.
///
/// The value lives in a ``ValueCell``, behind its `Mutex`; `withLock` runs the caller's body
/// under it (observers told before the lock is taken and after it is released), then asks the
/// key to save (`.didSet`) outside it. Values reach the key's `save` in
/// version order, one caller at a time (see `SaveTurn`), and no lock is held while the key
/// works. Observation goes through the cell's `ObservationRegistrar` and through `AsyncStream`s
/// fed under the lock, in mutation order.
final class SharedReference<Value: Sendable>: MutableBox {
  typealias Loader = @Sendable (LoadContext<Value>, LoadContinuation<Value>) -> Void
  typealias Saver = @Sendable (Value, SaveContext, SaveContinuation) -> Void
  typealias Subscriber = @Sendable (LoadContext<Value>, SharedSubscriber<Value>) -> SharedSubscription

  /// The default declared by the first handle; a load that finds nothing goes back to it.
  let initialValue: Value
  let keyDescription: String
  let registryKey: ReferenceKey?
  private let loader: Loader?
  private let saver: Saver?
  private let subscriber: Subscriber?
  private let reportIssue: @Sendable (String) -> Void
  /// The value with its lock and observers. ``Shared`` runs mutations on it directly, then asks
  /// this reference to save them.
  let cell: ValueCell<Value>
  /// Who may call the key's `save`. Only one caller at a time, so the key receives values in
  /// version order; the key runs with no lock held, so it may be slow or reach code that
  /// mutates the value again. A mutation made while another caller holds the turn is left to
  /// that caller, which saves it before giving the turn up.
  private struct SaveTurn {
    var taken = false
    /// A mutation happened since the holder last read the value.
    var mutated = false
    /// `save()` calls waiting for the turn, first come first served.
    var waiting: [CheckedContinuation<Void, Never>] = []
    /// The version last handed to the key.
    var savedVersion: UInt64 = 0
  }

  private let saveTurn = Mutex(SaveTurn())
  private let started = Mutex(false)
  private let subscription = Mutex<SharedSubscription?>(nil)

  /// A reference with no key (`Shared(value:)`).
  init(value: Value) {
    initialValue = value
    keyDescription = "Shared(value:)"
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

  /// Subscribes to the key and runs the first load, once; other callers wait for it.
  func startIfNeeded(skipLoad: Bool = false) {
    started.withLock { started in
      guard !started else { return }
      started = true
      guard let loader, let subscriber else { return }
      let context = LoadContext.initialValue(initialValue)
      let handle = subscriber(
        context,
        SharedSubscriber(
          callback: { [weak self] result in self?.apply(result) },
          onLoading: { [weak self] loading in self?.setSubscriberLoading(loading) }
        ))
      subscription.withLock { $0 = handle }
      guard !skipLoad else { return }
      beginLoad()
      loader(
        context,
        LoadContinuation(keyDescription, reportIssue: reportIssue) { [weak self] result in
          self?.endLoad(with: result)
        })
    }
  }

  // MARK: Reading

  var value: Value { cell.value }
  var loadError: (any Error)? { cell.loadError }
  var saveError: (any Error)? { cell.saveError }
  var isLoading: Bool { cell.isLoading }

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

  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    defer { if cell.savesMutations { saveAfterMutation() } }
    return try cell.withLock(body)
  }

  /// Saves the mutated value (`.didSet`), or leaves it to the caller holding the turn.
  func saveAfterMutation() {
    let takesTurn = saveTurn.withLock { turn in
      turn.mutated = true
      guard !turn.taken else { return false }
      turn.taken = true
      return true
    }
    if takesTurn { giveUpTurn() }
  }

  /// Waits until no other caller holds the save turn, and takes it.
  private func takeTurn() async {
    await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
      let isFree = saveTurn.withLock { turn in
        guard turn.taken else {
          turn.taken = true
          return true
        }
        turn.waiting.append(waiter)
        return false
      }
      if isFree { waiter.resume() }
    }
  }

  /// What the turn holder does next.
  private enum NextSave {
    /// Hand the turn to a waiting `save()`: it saves the latest value.
    case handOver(CheckedContinuation<Void, Never>)
    /// Save a mutation made while the turn was held.
    case mutation
    case done
  }

  /// Run by the turn holder once the key has its value: hands the turn to the next `save()`,
  /// or saves the mutations made meanwhile, then frees the turn.
  private func giveUpTurn() {
    while true {
      let next = saveTurn.withLock { turn -> NextSave in
        if !turn.waiting.isEmpty { return .handOver(turn.waiting.removeFirst()) }
        if turn.mutated {
          turn.mutated = false
          return .mutation
        }
        turn.taken = false
        return .done
      }
      switch next {
      case .handOver(let waiter):
        waiter.resume()
        return
      case .mutation:
        saveLatestMutation()
      case .done:
        return
      }
    }
  }

  private func saveLatestMutation() {
    guard let saver else { return }
    let (value, version) = cell.state.withLock { ($0.value, $0.version) }
    let isNewer = saveTurn.withLock { turn in
      // A `save()` already handed a value at least this recent to the key.
      guard version > turn.savedVersion else { return false }
      turn.savedVersion = version
      return true
    }
    guard isNewer else { return }
    saver(
      value, .didSet,
      SaveContinuation(keyDescription, reportIssue: reportIssue) { [weak self] result in
        self?.endSave(with: result)
      })
  }

  // MARK: Loading and saving

  func load() async throws {
    guard let loader else { return }
    beginLoad()
    let description = keyDescription
    let reportIssue = reportIssue
    try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
      loader(
        .userInitiated,
        LoadContinuation(description, reportIssue: reportIssue) { [weak self] result in
          // Nothing stored, on an explicit load, keeps the value (as swift-sharing does).
          self?.endLoad(with: result, keepingValueIfAbsent: true)
          waiter.resume(with: result.map { _ in () })
        })
    }
  }

  func save() async throws {
    guard let saver else { return }
    await takeTurn()
    let (value, version) = cell.state.withLock { ($0.value, $0.version) }
    saveTurn.withLock { $0.savedVersion = max($0.savedVersion, version) }
    let description = keyDescription
    let reportIssue = reportIssue
    try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
      saver(
        value, .userInitiated,
        SaveContinuation(description, reportIssue: reportIssue) { [weak self] result in
          self?.endSave(with: result)
          waiter.resume(with: result)
        })
      giveUpTurn()
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

  /// Absent → the declared default, no error; failure → error kept, value kept; success → the
  /// value, error cleared.
  private func apply(_ result: Result<Value?, any Error>) {
    switch result {
    case .success(let loaded):
      let newValue = loaded ?? initialValue
      cell.change(.value, .loadError) { state in
        state.value = newValue
        state.loadError = nil
        state.yieldToStreams()
      }
    case .failure(let error):
      cell.change(.loadError) { $0.loadError = error }
    }
  }

  private func endSave(with result: Result<Void, any Error>) {
    let newError: (any Error)? =
      switch result {
      case .success: nil
      case .failure(let error): error
      }
    // Common case: success with no earlier error; skip the observers.
    if newError == nil, cell.state.withLock({ $0.saveError == nil }) { return }
    cell.change(.saveError) { $0.saveError = newError }
  }
}
