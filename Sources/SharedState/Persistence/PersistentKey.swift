/// A key whose value a ``PersistentValue`` keeps: its `load`, `subscribe` and `save` are the
/// core's, so a key author writes only where the value lives (the store) and its identity.
///
/// `.fileStorage` and `.appStorage` are such keys (`Secrets`' `.secret` keeps a ``PersistentValue``
/// of its own store's type, which saves it a hop). A key of your own over
/// a ``PersistentStore`` of your own:
///
/// ```swift
/// struct RowKey<Value: Codable & Sendable>: PersistentKey {
///   let persistence: PersistentValue<RowStore, Value>
///   init(table: Table, key: String) {
///     persistence = PersistentValue(
///       store: RowStore(table: table, key: key),
///       decode: { try JSONDecoder().decode(Value.self, from: $0) },
///       encode: { try JSONEncoder().encode($0) })
///   }
///   var id: String { persistence.store.key }
/// }
/// ```
///
/// A key whose store type is not public can expose its core with an opaque store type:
/// `public var persistence: PersistentValue<some PersistentStore, Value> { core }`. A key whose
/// value type is fixed, rather than a generic parameter named `Value`, names it
/// (`typealias Value = Int`): Swift does not infer it from `persistence`.
public protocol PersistentKey<Value>: SharedKey {
  /// Where the value lives.
  associatedtype Store: PersistentStore
  /// The core that loads, watches, batches and writes the value.
  var persistence: PersistentValue<Store, Value> { get }
}

extension PersistentKey {
  /// Reads the store (see ``PersistentValue/load(context:continuation:)``).
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    persistence.load(context: context, continuation: continuation)
  }

  /// Watches the store for changes made elsewhere; cancelling writes a pending value.
  public func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    persistence.subscribe(context: context, subscriber: subscriber)
  }

  /// Writes the first change at once, batches the ones that follow, and writes
  /// ``SaveContext/userInitiated`` saves before resuming.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    persistence.save(value, context: context, continuation: continuation)
  }
}
