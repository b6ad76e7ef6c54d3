import Foundation
import SharedState
import Synchronization

extension SecretKeyStore {
  /// An empty store of its own that lives in memory, for the tests of code that uses
  /// ``SecretKey`` and live queries: fast, isolated, and it never touches a keyring. Changes made
  /// through one key reach the other keys and the queries of the same store at once, as they
  /// would through the Secret Service.
  public static func inMemory() -> SecretKeyStore {
    let items = InMemorySecrets()
    var search = SecretSearch(
      search: { items.search($0, $1, includeSecrets: $2) }, watch: { items.watch(.collection($0), $1) })
    search.isInMemory = true
    return SecretKeyStore(owner: items, search: search) { InMemorySecretItem(address: $0, items: items) }
  }
}

/// One address's item of an in-memory store, as a `PersistentStore`.
struct InMemorySecretItem: PersistentStore {
  let address: SecretItemAddress
  let items: InMemorySecrets

  var description: String { "the secret for \(address)" }

  func read() throws -> [UInt8]? { items.read(address.attributes, address.collection) }
  func write(_ bytes: [UInt8]) throws {
    items.write(bytes, address.attributes, label: address.label, address.collection)
  }
  func delete() throws { items.write(nil, address.attributes, label: "", address.collection) }

  func keepCopy(of bytes: [UInt8], stamp: String) throws {
    items.write(
      bytes, address.backupAttributes(stamp: stamp), label: address.backupLabel(stamp: stamp), address.collection)
  }

  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    items.watch(.item(address), onChange)
  }

  /// As the Secret Service's items: the core keeps the undecodable bytes it read.
  var readsBeforeWriting: Bool { false }
  var isInMemory: Bool { true }
}

/// The items of one ``SecretKeyStore/inMemory()`` store, and who watches them.
final class InMemorySecrets: Sendable {
  /// What a watcher follows.
  enum Watched {
    /// The item of a key's address.
    case item(SecretItemAddress)
    /// Every item of a collection (what live queries follow).
    case collection(CollectionID)
  }

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
    var watchers: [UInt64: (watched: Watched, onChange: @Sendable () -> Void)] = [:]
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
    -> [SecretSearch.FoundItem]
  {
    state.withLock { state in
      state.items.compactMap { key, item in
        guard key.collection == collection, attributes.allSatisfy({ key.attributes[$0.key] == $0.value }) else {
          return nil
        }
        let collectionPath = "/in-memory/\(collection)"
        return SecretSearch.FoundItem(
          item: SecretItemInfo(
            path: "\(collectionPath)/\(item.number)", label: item.label, attributes: key.attributes,
            collectionPath: collectionPath, isLocked: false, created: item.created, modified: item.modified),
          secret: includeSecrets ? item.bytes : nil)
      }
    }
  }

  func watch(_ watched: Watched, _ onChange: @escaping @Sendable () -> Void) -> SharedSubscription {
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
