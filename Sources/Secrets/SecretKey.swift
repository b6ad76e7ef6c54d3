import Dispatch
public import SharedState

extension SharedReaderKey {
  /// A `Codable` value kept in the Secret Service, the way Keychain keeps it on Apple systems.
  ///
  /// ```swift
  /// extension SharedKey where Self == SecretKey<APIToken?>.Default {
  ///   static var apiToken: Self { Self[.secret(service: "com.example.tool", account: "api"), default: nil] }
  /// }
  /// @Shared(.apiToken) var token
  /// $token.withLock { $0 = APIToken(…) }   // written within a second, once per window
  /// try await $token.save()                   // written before this returns
  /// ```
  ///
  /// - No item is not an error: the declared default is used. An unreachable or locked service,
  ///   a dismissed prompt, any D-Bus failure is thrown and visible in `loadError`; the value
  ///   is kept.
  /// - Bytes that are not JSON of the type give ``SecretKeyError/undecodable(_:reason:)``; the
  ///   item is not overwritten before a backup item holds its bytes.
  /// - Mutations are written at most once per `batchWindow`, carrying the latest value; an
  ///   explicit `save()` writes at once. Pending writes are flushed when the last handle goes,
  ///   at exit and on SIGTERM/SIGINT. Writing `nil` deletes the item.
  /// - Changes made by other processes (`secretctl set`, `secret-tool store`) arrive live.
  ///
  /// - Parameters:
  ///   - service: the `service` attribute of the item.
  ///   - account: the `account` attribute of the item.
  ///   - collection: where the item lives; the `default` alias unless given.
  ///   - batchWindow: how long mutations are gathered before one write.
  public static func secret<Value>(
    service: String, account: String, collection: CollectionID = .default, batchWindow: Duration = .seconds(1)
  ) -> Self where Self == SecretKey<Value> {
    SecretKey(SecretItemAddress(service: service, account: account, collection: collection), batchWindow: batchWindow)
  }
}

/// The key behind ``SharedReaderKey/secret(service:account:collection:batchWindow:)``.
public struct SecretKey<Value: Codable & Sendable>: SharedKey, CustomStringConvertible {
  public let address: SecretItemAddress
  private let core: SecretKeyCore<Value>
  private let store: ObjectIdentifier

  init(_ address: SecretItemAddress, batchWindow: Duration) {
    let storage = SecretStorage.current
    self.address = address
    store = ObjectIdentifier(storage.identity)
    core = SecretKeyCore(address: address, storage: storage, window: batchWindow, environment: .current)
  }

  /// Service, account and collection (and the store, which differs only in tests): nothing
  /// else, so every declaration of the same secret shares one value whatever its batch window.
  public struct ID: Hashable, Sendable {
    public let service: String
    public let account: String
    public let collection: CollectionID
    let store: ObjectIdentifier
  }

  public var id: ID {
    ID(service: address.service, account: address.account, collection: address.collection, store: store)
  }

  public var description: String {
    ".secret(service: \(String(reflecting: address.service)), account: \(String(reflecting: address.account)))"
  }

  /// The first load reads at once, like a Keychain query; an explicit `load()` reads off the
  /// cooperative pool, in turn with the reads that change signals cause.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    switch context {
    case .initialValue: continuation.resume(with: core.load())
    case .userInitiated: core.loadInTurn { continuation.resume(with: $0) }
    }
  }

  public func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    core.subscribe(subscriber)
  }

  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    switch context {
    case .didSet: core.scheduleWrite(value, continuation)
    case .userInitiated:
      // The write takes its place now, so a mutation made after `save()` began stays pending
      // and is written after this value, never dropped in its favour.
      let write = core.claimWriteNow(value)
      DispatchQueue.global().async { continuation.resume(with: write()) }
    }
  }
}
