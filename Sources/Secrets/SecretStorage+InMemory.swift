import Synchronization

extension SecretStorage {
  /// An empty store of its own that lives in memory, for the tests of code that uses
  /// ``SecretKey``: fast, isolated, and it never touches a keyring. Changes made through one
  /// key reach the other keys of the same storage, as they would through the Secret Service.
  public static func inMemory() -> SecretStorage {
    let store = InMemorySecretStore()
    var storage = SecretStorage(
      read: { store.read($0.attributes, $0.collection) },
      write: { store.write($1, $0.attributes, $0.collection) },
      delete: { store.write(nil, $0.attributes, $0.collection) },
      backup: { address, bytes, stamp in
        store.write(bytes, address.attributes.merging(["backup": stamp]) { $1 }, address.collection)
      },
      watch: { store.watch($0.collection, $1) }
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

  private struct State {
    var items: [ItemKey: [UInt8]] = [:]
    var watchers: [UInt64: (collection: CollectionID, onChange: @Sendable () -> Void)] = [:]
    var nextWatcher: UInt64 = 0
  }

  private let state = Mutex(State())

  func read(_ attributes: [String: String], _ collection: CollectionID) -> [UInt8]? {
    state.withLock { $0.items[ItemKey(attributes: attributes, collection: collection)] }
  }

  /// Stores `bytes` (deletes the item for `nil`) and tells the watchers of the collection.
  func write(_ bytes: [UInt8]?, _ attributes: [String: String], _ collection: CollectionID) {
    let watchers = state.withLock { state in
      state.items[ItemKey(attributes: attributes, collection: collection)] = bytes
      return state.watchers.values.filter { $0.collection == collection }.map(\.onChange)
    }
    watchers.forEach { $0() }
  }

  func watch(_ collection: CollectionID, _ onChange: @escaping @Sendable () -> Void) -> SharedSubscription {
    let id = state.withLock { state in
      state.nextWatcher += 1
      state.watchers[state.nextWatcher] = (collection, onChange)
      return state.nextWatcher
    }
    return SharedSubscription { [weak self] in
      _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
    }
  }
}
