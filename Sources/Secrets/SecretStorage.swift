public import SharedState
import Synchronization

/// The Secret Service's seam: the items behind `.secret` keys and live queries, in the Secret
/// Service or in memory for tests.
///
/// A key captures the `secretStorage` of the `SharedEnvironment` current when it is created
/// (unless its `secretKeyStore` names a store of another kind), so a test
/// puts every key it creates on an empty in-memory store, with every other key's storage, in
/// one set-up:
///
/// ```swift
/// @Test func rememberLogin() async throws {
///   try await SharedEnvironment.test().withValue {
///     @Shared(.secret(service: "com.example.tool", account: "api")) var token: Token? = nil
///     …
///   }
/// }
/// ```
///
/// Each operation blocks. ``SecretKey`` makes its first read and starts its watch on the thread
/// that declares it (so the value is there when declared, like a Keychain query); every later
/// read and write runs off Swift's cooperative pool.
public struct SecretStorage: Sendable {
  /// The item's bytes, or `nil` when there is no item.
  public var read: @Sendable (SecretItemAddress) throws -> [UInt8]?
  /// Creates or replaces the item's bytes (UTF-8 JSON).
  public var write: @Sendable (SecretItemAddress, [UInt8]) throws -> Void
  /// Deletes the item if it exists.
  public var delete: @Sendable (SecretItemAddress) throws -> Void
  /// Keeps `bytes` in a backup item beside the item: same attributes plus `backup` = `stamp`.
  public var backup: @Sendable (SecretItemAddress, [UInt8], _ stamp: String) throws -> Void
  /// Calls `onChange` whenever what is watched may have changed: the item of an address (a
  /// storage may also call it for other items of its collection), or any item of a collection,
  /// including a change to the collection itself, such as its lock.
  public var watch: @Sendable (Watched, _ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription
  /// The items of a collection whose attributes include the given ones (all when empty), with
  /// their secrets when asked for: what live queries read.
  public var search:
    @Sendable (_ attributes: [String: String], CollectionID, _ includeSecrets: Bool) throws -> [FoundItem]
  /// Tells stores apart: keys share a value only when they use the same store.
  let identity = StoreIdentity()
  /// Whether this is ``inMemory()``: change notices and last writes then happen at once.
  var isInMemory = false

  /// A store from its operations, for a store of another kind (each value is a distinct store:
  /// keys share a value only when they use the same one).
  ///
  /// - Parameters:
  ///   - read: Returns the item's bytes, or `nil` when there is no item.
  ///   - write: Creates or replaces the item's bytes.
  ///   - delete: Deletes the item if it exists.
  ///   - backup: Keeps bytes that did not decode in a backup item; the `String` is a UTC time
  ///     stamp that tells backups apart.
  ///   - watch: Calls its handler whenever the watched item, or any item of the watched
  ///     collection, may have changed, until the returned subscription is cancelled (calling
  ///     it for other items too costs a key one read). Throwing
  ///     `SecretError.serviceUnavailable` means "not now": the key tries again after its next
  ///     successful read, write or search; any other error stops watching for good.
  ///   - search: Returns the collection's items whose attributes include the given ones, with
  ///     their secrets when the `Bool` is set (locked items without). Without it, live queries
  ///     fail with ``SecretKeyError/searchUnsupported``.
  public init(
    read: @escaping @Sendable (SecretItemAddress) throws -> [UInt8]?,
    write: @escaping @Sendable (SecretItemAddress, [UInt8]) throws -> Void,
    delete: @escaping @Sendable (SecretItemAddress) throws -> Void,
    backup: @escaping @Sendable (SecretItemAddress, [UInt8], String) throws -> Void,
    watch: @escaping @Sendable (Watched, @escaping @Sendable () -> Void) throws -> SharedSubscription,
    search: @escaping @Sendable ([String: String], CollectionID, Bool) throws -> [FoundItem] = { _, _, _ in
      throw SecretKeyError.searchUnsupported
    }
  ) {
    self.read = read
    self.write = write
    self.delete = delete
    self.backup = backup
    self.watch = watch
    self.search = search
  }

  /// What a watch follows.
  public enum Watched: Hashable, Sendable {
    /// The item of a key's address.
    case item(SecretItemAddress)
    /// Every item of a collection, and the collection itself (what live queries follow).
    case collection(CollectionID)

    /// The collection that holds what is watched.
    public var collection: CollectionID {
      switch self {
      case .item(let address): address.collection
      case .collection(let collection): collection
      }
    }
  }

  /// One item a search found.
  public struct FoundItem: Hashable, Sendable {
    /// The item's description.
    public var item: SecretItemInfo
    /// Its secret, when the search asked for secrets and the item is unlocked.
    public var secret: [UInt8]?

    /// A found item from its parts.
    public init(item: SecretItemInfo, secret: [UInt8]?) {
      self.item = item
      self.secret = secret
    }
  }
}

/// The Secret Service on the session bus, live; an empty store in memory, in tests.
enum SecretStorageKey: SharedEnvironmentKey {
  static var liveValue: SecretStorage { .secretService(SecretClient()) }
  static func testValue() -> SecretStorage { .inMemory() }
}

extension SharedEnvironment {
  /// The Secret Service items that `.secret` keys (unless `secretKeyStore` names a store of
  /// another kind) and live queries use: the Secret Service on the session bus, live; an empty
  /// in-memory store in `SharedEnvironment.test(fileSystem:defaults:clock:reportIssue:)`.
  public var secretStorage: SecretStorage {
    get { self[SecretStorageKey.self] }
    set { self[SecretStorageKey.self] = newValue }
  }
}

/// An object whose only job is to be a distinct identity for one store (a ``SecretStorage``, a
/// ``SecretKeyStore``): keys share a value only when they use the same one.
final class StoreIdentity: Sendable {}
