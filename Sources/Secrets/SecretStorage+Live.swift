import Synchronization

extension SecretStorage {
  /// Items of the Secret Service, reached through `client`. Reads, writes and deletes reach the
  /// item the address names (`SecretClient.isNamed(_:by:)`, the rule `secretctl` and secretd
  /// follow too), so the backup items beside it are never read or replaced, and an item with an
  /// expiry (`secretctl set --ttl`) is still the one the address names. A write makes the item
  /// hold exactly the address, so it no longer expires.
  ///
  /// Values are UTF-8 JSON stored as `text/plain`: `secret-tool lookup` refuses to print any
  /// other content type ("secret does not contain a textual password").
  ///
  /// Where each item was last found is remembered: later reads and writes go straight to it
  /// (after checking that the provider is the same and the item is still the one the address
  /// names; a write, that it holds no expiry either) and search again only when that check
  /// fails. Two limits of that check: an alias such as `default` pointed at another collection
  /// is noticed only once the remembered item goes, and a client that changes the item's
  /// attributes between the check and the write (one round trip apart) still receives that
  /// write, as with a search and a store.
  public static func secretService(_ client: SecretClient) -> SecretStorage {
    let places = ItemPlaces()
    return SecretStorage(
      read: { address in
        if let handle = places[address],
          let value = try? client.secret(of: handle, ifNamedBy: address.attributes)
        {
          return Array(value.bytes)
        }
        places[address] = nil
        let found = try client.readItem(address.attributes, in: address.collection, exactly: true)
        places[address] = found.flatMap { try? client.itemHandle(at: $0.path) }
        return found.map { Array($0.value.bytes) }
      },
      write: { address, bytes in
        let value = SecretValue(bytes: bytes, contentType: "text/plain")
        if let handle = places[address],
          (try? client.replaceSecret(value, of: handle, ifAttributesAre: address.attributes)) == true
        {
          return
        }
        places[address] = nil
        try client.write(
          value, attributes: address.attributes, label: address.label, in: address.collection, exactly: true)
      },
      delete: { address in
        places[address] = nil
        try client.delete(address.attributes, in: address.collection, exactly: true)
      },
      backup: { address, bytes, stamp in
        try client.write(
          SecretValue(bytes: bytes), attributes: address.attributes.merging(["backup": stamp]) { $1 },
          label: "Backup of undecodable \(address.label), \(stamp)", in: address.collection, exactly: true)
      },
      watch: { watched, onChange in
        let changes = try client.changes(in: watched.collection)
        // A collection locked or unlocked changes what its items give, with no item signal.
        let collectionChanges = try client.collectionChanges(in: watched.collection)
        let tasks = [
          Task.detached {
            for await change in changes {
              // A key's item is where it was last found: a change to another item costs it no read.
              if case .item(let address) = watched, let known = places[address]?.path, change.itemPath != known {
                continue
              }
              onChange()
            }
          },
          Task.detached { for await _ in collectionChanges { onChange() } },
        ]
        return SharedSubscription { tasks.forEach { $0.cancel() } }
      },
      search: { attributes, collection, includeSecrets in
        try client.search(attributes, includeSecrets: includeSecrets, in: collection).map { found in
          FoundItem(
            item: SecretItemInfo(
              path: found.path, label: found.label, attributes: found.attributes,
              collectionPath: found.collectionPath, isLocked: found.isLocked, created: found.created,
              modified: found.modified),
            secret: found.secret.map { Array($0.bytes) })
        }
      }
    )
  }
}

/// Where items were last found, by address. A remembered item is only a hint: it is used after
/// its attributes are checked, and forgotten when that fails.
final class ItemPlaces: Sendable {
  private let handles = Mutex<[SecretItemAddress: ItemHandle]>([:])

  subscript(address: SecretItemAddress) -> ItemHandle? {
    get { handles.withLock { $0[address] } }
    set { handles.withLock { $0[address] = newValue } }
  }
}
