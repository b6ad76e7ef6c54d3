import SharedState
import Synchronization

extension SecretKeyStore {
  /// Items of the Secret Service, reached through `client`. Reads, writes and deletes reach the
  /// item the address names (`SecretClient.isNamed(_:by:)`, the rule `secretctl` and secretd
  /// follow too), so the backup items beside it are never read or replaced, and an item with an
  /// expiry (`secretctl set --ttl`) is still the one the address names. A write makes the item
  /// hold exactly the address, so it no longer expires.
  ///
  /// Values are UTF-8 JSON stored as `text/plain`: `secret-tool lookup` refuses to print any
  /// other content type ("secret does not contain a textual password"). Keys are watched
  /// through their collection's `ItemCreated/Changed/Deleted` and `CollectionChanged` signals;
  /// live queries search with `SearchItems`.
  ///
  /// - Parameter client: The connection to the provider; keys share a value when their stores
  ///   have the same client.
  public static func secretService(_ client: SecretClient) -> SecretKeyStore {
    let search = SecretSearch(
      search: { attributes, collection, includeSecrets in
        try client.search(attributes, includeSecrets: includeSecrets, in: collection).map { SecretSearch.FoundItem($0) }
      },
      watch: { collection, onChange in try watchCollection(collection, of: client) { _ in onChange() } }
    )
    return SecretKeyStore(owner: client, search: search) { SecretServiceItem(address: $0, client: client) }
  }
}

/// One Secret Service item as a `PersistentStore`: read and written with exactly the attributes
/// `service` and `account`, undecodable bytes kept in a backup item beside it, watched through
/// its collection's signals.
///
/// Where the item was last found is remembered: later reads and writes go straight to it (after
/// checking that the provider is the same and the item is still the one the address names; a
/// write, that it holds no expiry either) and search again only when that check fails. Two
/// limits of that check: an alias such as `default` pointed at another collection is noticed
/// only once the remembered item goes, and a client that changes the item's attributes between
/// the check and the write (one round trip apart) still receives that write, as with a search
/// and a store.
final class SecretServiceItem: PersistentStore {
  let address: SecretItemAddress
  let client: SecretClient
  /// Where the item was last found: only a hint, used after its attributes are checked.
  private let place = Mutex<ItemHandle?>(nil)

  init(address: SecretItemAddress, client: SecretClient) {
    self.address = address
    self.client = client
  }

  var description: String { "the secret for \(address)" }

  func read() throws -> [UInt8]? {
    if let handle = remembered, let value = try? client.secret(of: handle, ifNamedBy: address.attributes) {
      return Array(value.bytes)
    }
    remember(nil)
    let found = try client.readItem(address.attributes, in: address.collection, exactly: true)
    remember(found.flatMap { try? client.itemHandle(at: $0.path) })
    return found.map { Array($0.value.bytes) }
  }

  func write(_ bytes: [UInt8]) throws {
    let value = SecretValue(bytes: bytes, contentType: "text/plain")
    if let handle = remembered,
      (try? client.replaceSecret(value, of: handle, ifAttributesAre: address.attributes)) == true
    {
      return
    }
    remember(nil)
    try client.write(value, attributes: address.attributes, label: address.label, in: address.collection, exactly: true)
  }

  func delete() throws {
    remember(nil)
    try client.delete(address.attributes, in: address.collection, exactly: true)
  }

  func keepCopy(of bytes: [UInt8], stamp: String) throws {
    try client.write(
      SecretValue(bytes: bytes), attributes: address.backupAttributes(stamp: stamp),
      label: address.backupLabel(stamp: stamp), in: address.collection, exactly: true)
  }

  /// A provider that cannot be reached now is watched once it answers again.
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    do {
      return try watchCollection(address.collection, of: client) { [self] itemPath in
        // The item is where it was last found: a change to another item costs no read.
        if let itemPath, let known = remembered?.path, itemPath != known { return }
        onChange()
      }
    } catch SecretError.serviceUnavailable {
      return nil
    }
  }

  /// A read before every write would cost a round trip to the provider: the core keeps the
  /// undecodable bytes it read instead.
  var readsBeforeWriting: Bool { false }

  private var remembered: ItemHandle? { place.withLock { $0 } }

  private func remember(_ handle: ItemHandle?) { place.withLock { $0 = handle } }
}

/// Calls `onChange` for every change the provider signals in `collection`: with the item's path
/// for a change to an item, with nil for a change to the collection itself (locked or unlocked,
/// which changes what its items give with no item signal).
private func watchCollection(
  _ collection: CollectionID, of client: SecretClient, _ onChange: @escaping @Sendable (_ itemPath: String?) -> Void
) throws -> SharedSubscription {
  let changes = try client.changes(in: collection)
  let collectionChanges = try client.collectionChanges(in: collection)
  let tasks = [
    Task.detached { for await change in changes { onChange(change.itemPath) } },
    Task.detached { for await _ in collectionChanges { onChange(nil) } },
  ]
  return SharedSubscription { tasks.forEach { $0.cancel() } }
}

extension SecretSearch.FoundItem {
  /// What a live query keeps of an item the client found.
  fileprivate init(_ found: SecretItem) {
    self.init(
      item: SecretItemInfo(
        path: found.path, label: found.label, attributes: found.attributes, collectionPath: found.collectionPath,
        isLocked: found.isLocked, created: found.created, modified: found.modified),
      secret: found.secret.map { Array($0.bytes) })
  }
}
