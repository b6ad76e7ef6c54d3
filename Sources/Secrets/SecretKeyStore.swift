public import SharedState

/// Where `.secret` values live: the one place that says it, for every ``SecretKey`` and for the
/// live queries over the same items.
///
/// Three kinds come with the package: the Secret Service (``secretService(_:)``, the live
/// value), memory (``inMemory()``, what `SharedEnvironment.test()` gives), and OpenBao's KV engine
/// (`.openBao(_:)` in `SecretsOpenBao`). A key takes the store of the `SharedEnvironment` current
/// when it is created, so a scope chooses its store and the declarations stay the same:
///
/// ```swift
/// var fleet = SharedEnvironment.current
/// fleet.secretKeyStore = .openBao(OpenBaoConfiguration())
/// try await fleet.withValue {
///   @Shared(.secret(service: "com.example.deploy", account: "api")) var token: Token? = nil
/// }
/// ```
///
/// Each address's value is a SharedState `PersistentStore` of the store's own type, which the
/// key's `PersistentValue` calls directly: the rules (batching, echoes, backups, live changes)
/// are that core's, whatever the store.
public struct SecretKeyStore: Sendable {
  /// Tells stores apart: keys share a value only when their stores have the same owner.
  let owner: ObjectIdentifier
  private let makeItem: @Sendable (SecretItemAddress) -> any PersistentStore<[UInt8]>
  /// How live queries search and watch this store's items; nil when it cannot search (OpenBao):
  /// queries then fail with ``SecretKeyError/searchUnsupported``.
  public let search: SecretSearch?

  /// A store of your own: `item` gives the `PersistentStore` that holds an address's value (its
  /// JSON), called once per key.
  ///
  /// - Parameters:
  ///   - owner: The object that holds the items (a client, a connection). Keys of one address
  ///     and value type share one value when their stores have the same owner.
  ///   - search: How live queries search and watch the items; nil when they cannot.
  ///   - item: The store of an address.
  public init<Item: PersistentStore<[UInt8]>>(
    owner: some AnyObject & Sendable, search: SecretSearch? = nil,
    item: @escaping @Sendable (SecretItemAddress) -> Item
  ) {
    self.owner = ObjectIdentifier(owner)
    self.search = search
    makeItem = { item($0) }
  }

  /// The store that holds the value of `address`: what a key made now would read and write
  /// (a test reads what its code stored through it).
  ///
  /// - Parameter address: The service, account and collection of the value.
  public func item(at address: SecretItemAddress) -> any PersistentStore<[UInt8]> { makeItem(address) }
}

/// The Secret Service on the session bus, live; an empty store in memory, in tests.
enum SecretKeyStoreKey: SharedEnvironmentKey {
  static var liveValue: SecretKeyStore { .secretService(SecretClient()) }
  static func testValue() -> SecretKeyStore { .inMemory() }
}

extension SharedEnvironment {
  /// Where `.secret` keys keep their values and what live queries search: the Secret Service on
  /// the session bus, live; an empty in-memory store in
  /// `SharedEnvironment.test(fileSystem:defaults:clock:reportIssue:)`; OpenBao where a scope
  /// sets `.openBao(_:)`.
  public var secretKeyStore: SecretKeyStore {
    get { self[SecretKeyStoreKey.self] }
    set { self[SecretKeyStoreKey.self] = newValue }
  }
}
