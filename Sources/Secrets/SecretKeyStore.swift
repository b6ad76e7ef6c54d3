public import SharedState

/// Where `.secret` keys keep their values: by default the items of the environment's
/// `secretStorage` (the Secret Service live, memory in tests); else a `PersistentStore` of
/// another kind for each key, such as the OpenBao secrets of `SecretsOpenBao`.
///
/// ```swift
/// var fleet = SharedEnvironment.current
/// fleet.secretKeyStore = .openBao(OpenBaoConfiguration())
/// try await fleet.withValue {
///   @Shared(.secret(service: "com.example.deploy", account: "api")) var token: Token? = nil
/// }
/// ```
///
/// The declarations stay the same and so do the rules (SharedState's `PersistentValue` runs
/// every store). A key takes the store of the environment current when it is created. Live
/// queries (`.secretItems(matching:)`) search `secretStorage` whatever this says: searching is
/// the Secret Service's.
public struct SecretKeyStore: Sendable {
  enum Kind: Sendable {
    case secretStorage
    case stores(identity: StoreIdentity, makeStore: @Sendable (SecretItemAddress) -> any PersistentStore<[UInt8]>)
  }

  let kind: Kind

  /// The items of the environment's `secretStorage`: the default.
  public static var secretStorage: SecretKeyStore { SecretKeyStore(kind: .secretStorage) }

  /// A store of another kind: `makeStore` gives the store of each key, from the key's address,
  /// holding the value's JSON. Each store made this way is distinct: keys share a value only
  /// when they were made with the same one.
  ///
  /// - Parameter makeStore: The store of an address (called once per key).
  public init<Store: PersistentStore>(_ makeStore: @escaping @Sendable (SecretItemAddress) -> Store)
  where Store.Stored == [UInt8] {
    kind = .stores(identity: StoreIdentity(), makeStore: { makeStore($0) })
  }

  private init(kind: Kind) { self.kind = kind }

  /// The store of `address` in `environment`, and what tells it from other stores.
  func store(for address: SecretItemAddress, in environment: SharedEnvironment) -> (
    store: AnySecretStore, identity: ObjectIdentifier
  ) {
    switch kind {
    case .secretStorage:
      let storage = environment.secretStorage
      return (AnySecretStore(SecretItemStore(address: address, storage: storage)), ObjectIdentifier(storage.identity))
    case .stores(let identity, let makeStore):
      return (AnySecretStore(makeStore(address)), ObjectIdentifier(identity))
    }
  }
}

/// The items of `secretStorage` by default.
enum SecretKeyStoreKey: SharedEnvironmentKey {
  static var liveValue: SecretKeyStore { .secretStorage }
  static func testValue() -> SecretKeyStore { .secretStorage }
}

extension SharedEnvironment {
  /// Where `.secret` keys keep their values: ``SecretKeyStore/secretStorage`` (the items of
  /// `secretStorage`) unless set to a store of another kind, such as `.openBao(_:)`.
  public var secretKeyStore: SecretKeyStore {
    get { self[SecretKeyStoreKey.self] }
    set { self[SecretKeyStoreKey.self] = newValue }
  }
}

/// Any key's store, as one type: ``SecretKey`` runs one `PersistentValue` over whichever store
/// its environment names.
struct AnySecretStore: PersistentStore {
  private let base: any PersistentStore<[UInt8]>

  init(_ base: any PersistentStore<[UInt8]>) { self.base = base }

  var description: String { base.description }
  func read() throws -> [UInt8]? { try base.read() }
  func write(_ bytes: [UInt8]) throws { try base.write(bytes) }
  func delete() throws { try base.delete() }
  func keepCopy(of bytes: [UInt8], stamp: String) throws { try base.keepCopy(of: bytes, stamp: stamp) }
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? { try base.watch(onChange) }
  var readsBeforeWriting: Bool { base.readsBeforeWriting }
  func readDiscarded() { base.readDiscarded() }
  var isInMemory: Bool { base.isInMemory }
  var writesFirstChangeAtOnce: Bool { base.writesFirstChangeAtOnce }
}
