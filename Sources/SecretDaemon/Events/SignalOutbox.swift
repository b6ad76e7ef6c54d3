// Store changes become D-Bus signals here, in the order they were made, outside the store's
// lock: a change that deletes thousands of items announces them without holding up readers.
import Synchronization
import SystemCalls

/// Changes waiting to be announced, and the one place that announces them.
final class SignalOutbox: Sendable {
  private let pending = Mutex<[StoreEvent]>([])
  /// One announcer at a time, so signals leave in the order the changes were made.
  private let announcing = SerialLock()
  private let connection: BusConnection
  private let maximumBytes: Int

  init(connection: BusConnection, maximumBytes: Int) {
    self.connection = connection
    self.maximumBytes = maximumBytes
  }

  /// Records a change; called under the store's write lock, so the order is the store's.
  func append(_ event: StoreEvent) { pending.withLock { $0.append(event) } }

  /// Sends every pending signal. Waits while another thread is sending, so when it returns the
  /// caller's own changes have been announced.
  func flush() {
    announcing.run {
      while true {
        let batch = pending.withLock { pending -> [StoreEvent] in
          defer { pending.removeAll() }
          return pending
        }
        if batch.isEmpty { return }
        announce(batch)
      }
    }
  }

  /// The signals of `batch`; a collection's `Items` property is invalidated once per batch.
  private func announce(_ batch: [StoreEvent]) {
    var itemsChanged: [String] = []
    func itemsChange(_ collection: String) {
      if !itemsChanged.contains(collection) { itemsChanged.append(collection) }
    }
    for event in batch {
      switch event {
      case .collectionCreated(let name, let collections):
        emit(ObjectPaths.root, Interfaces.service, "CollectionCreated", .objectPath(ObjectPaths.collection(name)))
        emitCollections(collections)
      case .collectionDeleted(let name, let collections):
        emit(ObjectPaths.root, Interfaces.service, "CollectionDeleted", .objectPath(ObjectPaths.collection(name)))
        emitCollections(collections)
      case .collectionChanged(let name, let label, let locked):
        emit(ObjectPaths.root, Interfaces.service, "CollectionChanged", .objectPath(ObjectPaths.collection(name)))
        emitPropertiesChanged(
          ObjectPaths.collection(name), Interfaces.collection, ["Label": .string(label), "Locked": .boolean(locked)])
      case .itemCreated(let reference):
        emit(
          ObjectPaths.collection(reference.collection), Interfaces.collection, "ItemCreated",
          .objectPath(ObjectPaths.item(reference)))
        itemsChange(reference.collection)
      case .itemDeleted(let reference):
        emit(
          ObjectPaths.collection(reference.collection), Interfaces.collection, "ItemDeleted",
          .objectPath(ObjectPaths.item(reference)))
        itemsChange(reference.collection)
      case .itemChanged(let reference, let item):
        emit(
          ObjectPaths.collection(reference.collection), Interfaces.collection, "ItemChanged",
          .objectPath(ObjectPaths.item(reference)))
        emitPropertiesChanged(
          ObjectPaths.item(reference), Interfaces.item,
          [
            "Label": .string(item.label), "Attributes": .stringDictionary(item.attributes),
            "Type": .string(item.type), "Modified": .uint64(item.modified),
          ])
      }
    }
    for collection in itemsChanged {
      emitPropertiesChanged(ObjectPaths.collection(collection), Interfaces.collection, [:], invalidated: ["Items"])
    }
  }

  private func emit(_ path: String, _ interface: String, _ signal: String, _ argument: DBusValue) {
    connection.emitSignal(
      path: path, interface: interface, name: signal, arguments: .tuple([argument]), maximumBytes: maximumBytes)
  }

  private func emitCollections(_ names: [String]) {
    emitPropertiesChanged(
      ObjectPaths.root, Interfaces.service, ["Collections": .objectPaths(names.map(ObjectPaths.collection))])
  }

  private func emitPropertiesChanged(
    _ path: String, _ interface: String, _ changed: [String: DBusValue], invalidated: [String] = []
  ) {
    let entries = changed.sorted { $0.key < $1.key }.map { DBusValue.dictEntry(.string($0.key), .variant($0.value)) }
    connection.emitSignal(
      path: path, interface: Interfaces.properties, name: "PropertiesChanged",
      arguments: .tuple([
        .string(interface), .array(elementType: "{sv}", entries),
        .array(elementType: "s", invalidated.map { .string($0) }),
      ]),
      maximumBytes: maximumBytes)
  }
}
