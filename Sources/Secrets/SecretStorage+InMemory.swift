import Foundation
import Synchronization

extension SecretStorage {
  /// An empty store of its own that lives in memory, for the tests of code that uses
  /// ``SecretKey`` and live queries: fast, isolated, and it never touches a keyring. Changes made
  /// through one key reach the other keys and the queries of the same storage, as they would
  /// through the Secret Service.
  public static func inMemory() -> SecretStorage {
    let store = InMemorySecretStore()
    var storage = SecretStorage(
      read: { store.read($0.attributes, $0.collection) },
      write: { store.write($1, $0.attributes, label: $0.label, $0.collection) },
      delete: { store.write(nil, $0.attributes, label: "", $0.collection) },
      backup: { address, bytes, stamp in
        store.write(
          bytes, address.attributes.merging(["backup": stamp]) { $1 },
          label: "Backup of undecodable \(address.label), \(stamp)", address.collection)
      },
      watch: { store.watch($0, $1) },
      search: { store.search($0, $1, includeSecrets: $2) }
    )
    storage.isInMemory = true
    return storage
  }
}

final class InMemorySecretStore: Sendable {
  private struct ItemKey: Hashable {
    var attributes: [String: String]
    var collection: CollectionID
  }

  private struct Item {
    var number: Int
    var bytes: [UInt8]
    var label: String
    var created: Date
    var modified: Date
  }

  private struct State {
    var items: [ItemKey: Item] = [:]
    var nextNumber = 1
    var watchers: [UInt64: (watched: SecretStorage.Watched, onChange: @Sendable () -> Void)] = [:]
    var nextWatcher: UInt64 = 0
  }

  private let state = Mutex(State())

  func read(_ attributes: [String: String], _ collection: CollectionID) -> [UInt8]? {
    state.withLock { $0.items[ItemKey(attributes: attributes, collection: collection)]?.bytes }
  }

  /// Stores `bytes` (deletes the item for `nil`) and tells the watchers of the item and of its
  /// collection.
  func write(_ bytes: [UInt8]?, _ attributes: [String: String], label: String, _ collection: CollectionID) {
    let now = Date()
    let watchers = state.withLock { state in
      let key = ItemKey(attributes: attributes, collection: collection)
      if let bytes {
        var item =
          state.items[key] ?? Item(number: state.nextNumber, bytes: [], label: label, created: now, modified: now)
        if item.number == state.nextNumber { state.nextNumber += 1 }
        item.bytes = bytes
        item.label = label
        item.modified = now
        state.items[key] = item
      } else {
        state.items[key] = nil
      }
      return state.watchers.values.filter { watcher in
        switch watcher.watched {
        case .collection(let watched): watched == collection
        case .item(let address): address.collection == collection && address.attributes == attributes
        }
      }.map(\.onChange)
    }
    watchers.forEach { $0() }
  }

  /// The collection's items whose attributes include `attributes`.
  func search(_ attributes: [String: String], _ collection: CollectionID, includeSecrets: Bool)
    -> [SecretStorage.FoundItem]
  {
    state.withLock { state in
      state.items.compactMap { key, item in
        guard key.collection == collection, attributes.allSatisfy({ key.attributes[$0.key] == $0.value }) else {
          return nil
        }
        let collectionPath = "/in-memory/\(collection)"
        return SecretStorage.FoundItem(
          item: SecretItemInfo(
            path: "\(collectionPath)/\(item.number)", label: item.label, attributes: key.attributes,
            collectionPath: collectionPath, isLocked: false, created: item.created, modified: item.modified),
          secret: includeSecrets ? item.bytes : nil)
      }
    }
  }

  func watch(_ watched: SecretStorage.Watched, _ onChange: @escaping @Sendable () -> Void) -> SharedSubscription {
    let id = state.withLock { state in
      state.nextWatcher += 1
      state.watchers[state.nextWatcher] = (watched, onChange)
      return state.nextWatcher
    }
    return SharedSubscription { [weak self] in
      _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
    }
  }
}
