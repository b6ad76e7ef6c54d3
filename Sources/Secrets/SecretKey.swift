public import SharedState

extension SharedReaderKey {
  /// A `Codable` value kept in the Secret Service, the way Keychain keeps it on Apple systems.
  ///
  /// ```swift
  /// extension SharedKey where Self == SecretKey<APIToken?>.Default {
  ///   static var apiToken: Self { Self[.secret(service: "com.example.tool", account: "api"), default: nil] }
  /// }
  /// @Shared(.apiToken) var token
  /// $token.withLock { $0 = APIToken(…) }   // written at once; more changes within a second wait for it
  /// try await $token.save()                   // written before this returns
  /// ```
  ///
  /// - No item is not an error: the declared default is used. An unreachable or locked service,
  ///   a dismissed prompt, any D-Bus failure is thrown and visible in `loadError`; the value
  ///   is kept.
  /// - Bytes that are not JSON of the type give ``SecretKeyError/undecodable(_:reason:)``; the
  ///   item is not overwritten before a backup item holds its bytes.
  /// - The first mutation is written at once; the ones that follow within `writeWindow` are
  ///   written together when it closes, carrying the latest value (at most two writes in any
  ///   window); an explicit `save()` writes at once. Pending writes are flushed when the last handle goes,
  ///   at exit and on SIGTERM/SIGINT. Writing `nil` deletes the item.
  /// - Changes made by other processes (`secretctl set`, `secret-tool store`) arrive live;
  ///   while a local value waits for its write, it wins.
  ///
  /// The rules are SharedState's `PersistentValue`'s, the same as `.fileStorage`'s; where the
  /// value lives is the current `SharedEnvironment`'s ``SecretKeyStore``: the Secret Service
  /// live, an empty in-memory store in `SharedEnvironment.test()`, OpenBao where a scope says so.
  ///
  /// - Parameters:
  ///   - service: the `service` attribute of the item.
  ///   - account: the `account` attribute of the item.
  ///   - collection: where the item lives; the `default` alias unless given.
  ///   - writeWindow: how long the mutations after a write are gathered before the next.
  public static func secret<Value>(
    service: String, account: String, collection: CollectionID = .default, writeWindow: Duration = .seconds(1)
  ) -> Self where Self == SecretKey<Value> {
    SecretKey(SecretItemAddress(service: service, account: account, collection: collection), writeWindow: writeWindow)
  }
}

/// The key behind `.secret(service:account:collection:writeWindow:)`: a SharedState
/// `PersistentValue` over the store its address has in the environment's ``SecretKeyStore``.
///
/// - The first load reads at once, like a Keychain query; an explicit `load()` reads off the
///   cooperative pool, in turn with the reads that change notices cause.
/// - Subscribing watches the item as its store does (the Secret Service: the collection's
///   `ItemCreated/Changed/Deleted` signals); the key's own writes do not come back as changes.
///   When the store cannot be reached, watching starts after the key's next successful read or
///   write. Cancelling writes a pending value.
/// - Saving writes the first mutation at once and batches the ones that follow (`.didSet`) into
///   one write per window, and writes `save()` (`.userInitiated`) before resuming; `nil`
///   deletes the item. Bytes that did not decode are first copied to a backup.
public struct SecretKey<Value: Codable & Sendable>: SharedKey, CustomStringConvertible {
  /// A `PersistentValue` over the store's own item type, which it calls with nothing between.
  let core: any SecretKeyCore<Value>
  /// Where the value lives.
  public let address: SecretItemAddress
  private let owner: ObjectIdentifier

  init(_ address: SecretItemAddress, writeWindow: Duration) {
    let environment = SharedEnvironment.current
    let store = environment.secretKeyStore
    self.address = address
    owner = store.owner
    core = Self.core(over: store.item(at: address), address: address, window: writeWindow, environment: environment)
  }

  /// Called with the `any PersistentStore` the store gave, which Swift opens: the core is made
  /// for the item's own type, so its writes reach the item with no type-erasing store between.
  private static func core<Item: PersistentStore<[UInt8]>>(
    over item: Item, address: SecretItemAddress, window: Duration, environment: SharedEnvironment
  ) -> any SecretKeyCore<Value> {
    PersistentValue(
      store: item, window: window, decode: { try SecretJSON.decode(Value.self, $0, address: address) },
      encode: { try SecretJSON.encode($0) }, environment: environment)
  }

  /// Reads the store (see SharedState's `PersistentValue.load(context:continuation:)`).
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    core.load(context: context, continuation: continuation)
  }

  /// Watches the store for changes made elsewhere; cancelling writes a pending value.
  public func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    core.subscribe(context: context, subscriber: subscriber)
  }

  /// Writes the first change at once, batches the ones that follow, and writes
  /// `.userInitiated` saves before resuming.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    core.save(value, context: context, continuation: continuation)
  }

  /// Whether a value waits for its window to close, or for its write at once.
  package var hasPendingWrite: Bool { core.hasPendingWrite }

  /// Service, account and collection (and the store's owner, which differs only in tests):
  /// nothing else, so every declaration of the same secret shares one value whatever its window.
  public struct ID: Hashable, Sendable {
    /// The item's `service` attribute.
    public let service: String
    /// The item's `account` attribute.
    public let account: String
    /// The collection that holds the item.
    public let collection: CollectionID
    let store: ObjectIdentifier
  }

  /// Service, account, collection and store: keys of the same value type with equal ids share
  /// one value.
  public var id: ID {
    ID(service: address.service, account: address.account, collection: address.collection, store: owner)
  }

  /// `.secret(service: "S", account: "A")`, for messages and debugging.
  public var description: String {
    ".secret(service: \(String(reflecting: address.service)), account: \(String(reflecting: address.account)))"
  }
}

/// What ``SecretKey`` asks of its `PersistentValue`, whichever store type that value runs over.
protocol SecretKeyCore<Value>: Sendable {
  associatedtype Value: Sendable
  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>)
  func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription
  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation)
  var hasPendingWrite: Bool { get }
}

extension PersistentValue: SecretKeyCore {}
