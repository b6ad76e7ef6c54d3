// Store changes become D-Bus signals here, in the order they were made, outside the store's
// lock: a change that deletes thousands of items announces them without holding up readers.
// Each signal is sent to every served client by name, never broadcast: on a bus that other users
// share, a refused client that adds a match rule hears nothing (not a label, not an attribute).
import GLibBridge
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

  /// Sends every pending signal to `recipients`. Waits while another thread is sending, so
  /// when it returns the caller's own changes have been announced.
  func flush(to recipients: @autoclosure () -> [String]) {
    announcing.run {
      var served: [String]?
      while true {
        let batch = pending.withLock { pending -> [StoreEvent] in
          defer { pending.removeAll() }
          return pending
        }
        if batch.isEmpty { return }
        if served == nil { served = recipients() }
        announce(batch, to: served ?? [])
      }
    }
  }

  /// The signals of `batch`; a collection's `Items` property is invalidated once per batch.
  private func announce(_ batch: [StoreEvent], to recipients: [String]) {
    let send = Sender(outbox: self, recipients: recipients)
    var itemsChanged: [String] = []
    for event in batch {
      switch event {
      case .collectionCreated(let name, let collections):
        send.signal(.collectionCreated, ObjectPaths.root, .objectPath(ObjectPaths.collection(name)))
        send.collections(collections)
      case .collectionDeleted(let name, let collections):
        send.signal(.collectionDeleted, ObjectPaths.root, .objectPath(ObjectPaths.collection(name)))
        send.collections(collections)
      case .collectionChanged(let name, let label, let locked):
        send.signal(.collectionChanged, ObjectPaths.root, .objectPath(ObjectPaths.collection(name)))
        send.propertiesChanged(
          ObjectPaths.collection(name), Interfaces.collection, ["Label": .string(label), "Locked": .boolean(locked)])
      case .itemCreated(let reference), .itemDeleted(let reference):
        let signal: BusSignal = if case .itemCreated = event { .itemCreated } else { .itemDeleted }
        send.signal(signal, ObjectPaths.collection(reference.collection), .objectPath(ObjectPaths.item(reference)))
        if !itemsChanged.contains(reference.collection) { itemsChanged.append(reference.collection) }
      case .itemsListed(let name, let numbers):
        send.items(of: name, numbers)
      case .itemChanged(let reference, let item):
        send.signal(
          .itemChanged, ObjectPaths.collection(reference.collection), .objectPath(ObjectPaths.item(reference)))
        send.propertiesChanged(
          ObjectPaths.item(reference), Interfaces.item,
          [
            "Label": .string(item.label), "Attributes": .stringDictionary(item.attributes),
            "Type": .string(item.type), "Modified": .uint64(item.modified),
          ])
      }
    }
    for collection in itemsChanged {
      send.propertiesChanged(ObjectPaths.collection(collection), Interfaces.collection, [:], invalidated: ["Items"])
    }
  }

  /// Sends signals of one batch to its recipients.
  private struct Sender {
    let outbox: SignalOutbox
    let recipients: [String]

    func signal(_ signal: BusSignal, _ path: String, _ argument: DBusValue) {
      send(signal, path, .tuple([argument]))
    }

    /// A collection's `Items`, given whole; invalidated instead when the list would not fit
    /// in one message.
    func items(of collection: String, _ numbers: [Int]) {
      let paths = numbers.map { ObjectPaths.item(ItemReference(collection: collection, item: $0)) }
      let path = ObjectPaths.collection(collection)
      guard paths.reduce(0, { $0 + $1.utf8.count + 8 }) < outbox.maximumBytes / 2 else {
        propertiesChanged(path, Interfaces.collection, [:], invalidated: ["Items"])
        return
      }
      propertiesChanged(path, Interfaces.collection, ["Items": .objectPaths(paths)])
    }

    func collections(_ names: [String]) {
      propertiesChanged(
        ObjectPaths.root, Interfaces.service, ["Collections": .objectPaths(names.map(ObjectPaths.collection))])
    }

    func propertiesChanged(
      _ path: String, _ interface: String, _ changed: [String: DBusValue], invalidated: [String] = []
    ) {
      let entries = changed.sorted { $0.key < $1.key }.map { DBusValue.dictEntry(.string($0.key), .variant($0.value)) }
      send(
        .propertiesChanged, path,
        .tuple([
          .string(interface), .array(elementType: "{sv}", entries),
          .array(elementType: "s", invalidated.map { .string($0) }),
        ]))
    }

    private func send(_ signal: BusSignal, _ path: String, _ arguments: DBusValue) {
      outbox.connection.emitSignal(
        signal, path: path, arguments: arguments, to: recipients, maximumBytes: outbox.maximumBytes)
    }
  }
}
