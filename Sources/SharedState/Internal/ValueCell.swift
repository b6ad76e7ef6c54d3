// Public imports: `withLock` is inlined into the caller's module (see `ValueCell`).
public import Observation
public import Synchronization

/// The value of a ``SharedReference`` with its lock and its observers: all that a mutation
/// touches.
///
/// `withLock` is inlinable so that it runs specialized for the caller's `Value`; run
/// generically, it spent most of its time looking up generic metadata. Nothing holds a cell
/// weakly (the registry and the key's callbacks hold its reference weakly): an object that is
/// referenced weakly is retained and released through a side table, which cost a mutation as
/// much as the rest of it. ``Shared`` keeps the cell beside its box, so a mutation reaches it
/// without a dynamic cast (a key that saves is then handed the mutation through its reference).
@usableFromInline
final class ValueCell<Value: Sendable>: Observable, Sendable {
  @usableFromInline
  struct State {
    @usableFromInline var value: Value
    var loadError: (any Error)?
    var saveError: (any Error)?
    var loadsInFlight = 0
    var subscriberLoading = false
    @usableFromInline var version: UInt64 = 0
    var streams: [UInt64: AsyncStream<Value>.Continuation] = [:] {
      didSet { streamCount = streams.count }
    }
    /// `streams.count`, read on every mutation without touching the dictionary.
    @usableFromInline var streamCount = 0
    var nextStreamID: UInt64 = 0

    /// Hands the value to every `values` stream.
    @usableFromInline
    func yieldToStreams() {
      for continuation in streams.values { continuation.yield(value) }
    }
  }

  /// What observers can watch, besides the value.
  enum Field {
    case value, loadError, saveError, isLoading
  }

  @usableFromInline let state: Mutex<State>
  @usableFromInline let registrar = ObservationRegistrar()
  // Instantiated once: a key path literal in a generic context is rebuilt on every evaluation.
  @usableFromInline let valuePath: any KeyPath<ValueCell, Value> & Sendable = \.value
  private let loadErrorPath: any KeyPath<ValueCell, (any Error)?> & Sendable = \.loadError
  private let saveErrorPath: any KeyPath<ValueCell, (any Error)?> & Sendable = \.saveError
  private let isLoadingPath: any KeyPath<ValueCell, Bool> & Sendable = \.isLoading
  /// Whether a mutation is handed to a key's `save` (not for `Shared(value:)` or `.inMemory`).
  @usableFromInline let savesMutations: Bool

  init(value: Value, savesMutations: Bool) {
    state = Mutex(State(value: value))
    self.savesMutations = savesMutations
  }

  var value: Value {
    registrar.access(self, keyPath: valuePath)
    return state.withLock { $0.value }
  }

  var loadError: (any Error)? {
    registrar.access(self, keyPath: loadErrorPath)
    return state.withLock { $0.loadError }
  }

  var saveError: (any Error)? {
    registrar.access(self, keyPath: saveErrorPath)
    return state.withLock { $0.saveError }
  }

  var isLoading: Bool {
    registrar.access(self, keyPath: isLoadingPath)
    return state.withLock { $0.loadsInFlight > 0 || $0.subscriberLoading }
  }

  /// Runs a read-modify-write of the value under the lock, observers told before the lock is
  /// taken and after it is released (so they may read the value), streams fed under it.
  @inlinable
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    registrar.willSet(self, keyPath: valuePath)
    defer { registrar.didSet(self, keyPath: valuePath) }
    return try state.withLock { (state) throws(E) -> R in
      defer {
        // Even a body that throws may have changed the value in place.
        state.version += 1
        if state.streamCount > 0 { state.yieldToStreams() }
      }
      return try body(&state.value)
    }
  }

  /// Changes the state under the lock, telling the observers of `fields`.
  func change<R>(_ fields: Field..., body: @Sendable (inout State) -> R) -> R {
    for field in fields { tell(.willSet, observersOf: field) }
    defer { for field in fields.reversed() { tell(.didSet, observersOf: field) } }
    return state.withLock { body(&$0) }
  }

  private enum Moment {
    case willSet, didSet
  }

  private func tell(_ moment: Moment, observersOf field: Field) {
    switch field {
    case .value: tell(moment, observersOf: valuePath)
    case .loadError: tell(moment, observersOf: loadErrorPath)
    case .saveError: tell(moment, observersOf: saveErrorPath)
    case .isLoading: tell(moment, observersOf: isLoadingPath)
    }
  }

  private func tell<Member>(_ moment: Moment, observersOf path: any KeyPath<ValueCell, Member> & Sendable) {
    switch moment {
    case .willSet: registrar.willSet(self, keyPath: path)
    case .didSet: registrar.didSet(self, keyPath: path)
    }
  }
}
