// The daemon: owns the store and sessions, registers the object tree, routes calls to the
// per-interface objects, and turns store events into D-Bus signals.

/// How the daemon behaves; set from the command line.
public struct Configuration: Sendable {
  public var limits: Limits
  /// Seconds an item lives when it names no expiry attribute; nil keeps items until deleted.
  public var defaultTTL: UInt64?

  public init(limits: Limits = Limits(), defaultTTL: UInt64? = nil) {
    self.limits = limits
    self.defaultTTL = defaultTTL
  }
}

/// A Secret Service provider serving one bus connection, keeping everything in memory.
///
/// Calls arrive on two threads: GDBus's worker thread (the message filter, which answers the
/// Secret Service methods and properties) and the GLib main context the daemon was started on
/// (subtree dispatch of what the filter leaves, bus signals, the expiry timer). Every entry point
/// takes `exclusive`, so the store, the sessions and the registrations are only touched by one
/// thread at a time, in the order the calls arrive.
public final class Daemon {
  let connection: BusConnection
  /// Serialises every entry point (see above). Not recursive: entry points never call each other.
  private let exclusive = SerialLock()
  let store: Store
  let sessions: SessionRegistry
  let descriptions: InterfaceDescriptions
  private var expiryTimer: Timer?
  /// Events of the method call being answered, published after its reply (nil outside calls).
  private var deferredEvents: [StoreEvent]?

  /// Prepares the daemon; nothing is visible on the bus until ``start()``.
  public init(connection: BusConnection, configuration: Configuration, clock: any Clock = SystemClock()) throws(GIOError) {
    Gcrypt.initialize()
    self.connection = connection
    self.store = Store(limits: configuration.limits, clock: clock, defaultTTL: configuration.defaultTTL)
    self.sessions = SessionRegistry(maxPerClient: configuration.limits.maxSessionsPerClient)
    self.descriptions = try InterfaceDescriptions(xml: Interfaces.xml)
  }

  /// Registers every object path, watches clients leaving, and arms expiry.
  public func start() throws(GIOError) {
    for root in [
      ObjectPaths.root, ObjectPaths.collections, ObjectPaths.aliases, ObjectPaths.sessions, ObjectPaths.prompts,
    ] {
      try connection.registerSubtree(root, tree: self, descriptions: descriptions)
    }
    for name in store.collectionNames {
      try connection.registerSubtree(ObjectPaths.collection(name), tree: self, descriptions: descriptions)
    }
    syncAliasRegistrations()
    store.onEvent = { [unowned self] event in
      if self.deferredEvents != nil { self.deferredEvents?.append(event) } else { self.publish(event) }
    }
    let timer = Timer { [unowned self] in self.expireDue() }
    expiryTimer = timer
    store.onNextExpiryChanged = { [unowned self] time in self.armExpiry(at: time) }
    connection.subscribeToBus(signal: "NameOwnerChanged", argument0: nil) { [unowned self] arguments in
      guard let name = arguments.child(0)?.string, let newOwner = arguments.child(2)?.string,
        newOwner.isEmpty, name.hasPrefix(":")
      else { return }
      self.exclusive.run { self.sessions.closeAll(ownedBy: name) }
    }
    // Last: from here on, calls are answered on the worker thread too.
    connection.serveOnWorkerThread(root: ObjectPaths.root, tree: self, descriptions: descriptions)
  }

  /// Counts for logs and tests.
  public var itemCount: Int { exclusive.run { store.itemCount } }
  // MARK: Events to signals

  /// Runs `body`, which sends a reply, and only then publishes the signals of the changes it
  /// made: the client goes on while the signals are written. Still under the lock, so nothing
  /// the client sends next is handled before the signals and registrations are done.
  private func answeringBeforeSignals(_ body: () -> Void) {
    deferredEvents = []
    body()
    let events = deferredEvents ?? []
    deferredEvents = nil
    for event in events { publish(event) }
  }

  private func publish(_ event: StoreEvent) {
    switch event {
    case .collectionCreated(let name):
      try? connection.registerSubtree(ObjectPaths.collection(name), tree: self, descriptions: descriptions)
      emit(ObjectPaths.root, Interfaces.service, "CollectionCreated", ObjectPaths.collection(name))
      emitCollectionsChanged()
    case .collectionDeleted(let name):
      connection.unregisterSubtree(ObjectPaths.collection(name))
      syncAliasRegistrations()
      emit(ObjectPaths.root, Interfaces.service, "CollectionDeleted", ObjectPaths.collection(name))
      emitCollectionsChanged()
    case .aliasesChanged:
      syncAliasRegistrations()
    case .collectionChanged(let name):
      emit(ObjectPaths.root, Interfaces.service, "CollectionChanged", ObjectPaths.collection(name))
      if let collection = store.collections[name] {
        emitPropertiesChanged(
          ObjectPaths.collection(name), Interfaces.collection,
          ["Label": .string(collection.label), "Locked": .boolean(collection.locked)])
      }
    case .itemCreated(let collection, let item):
      let path = ObjectPaths.item(ItemReference(collection: collection, item: item))
      emit(ObjectPaths.collection(collection), Interfaces.collection, "ItemCreated", path)
      emitPropertiesChanged(ObjectPaths.collection(collection), Interfaces.collection, [:], invalidated: ["Items"])
    case .itemDeleted(let collection, let item):
      let path = ObjectPaths.item(ItemReference(collection: collection, item: item))
      emit(ObjectPaths.collection(collection), Interfaces.collection, "ItemDeleted", path)
      emitPropertiesChanged(ObjectPaths.collection(collection), Interfaces.collection, [:], invalidated: ["Items"])
    case .itemChanged(let collection, let number):
      let reference = ItemReference(collection: collection, item: number)
      emit(ObjectPaths.collection(collection), Interfaces.collection, "ItemChanged", ObjectPaths.item(reference))
      if let item = try? store.item(reference) {
        emitPropertiesChanged(
          ObjectPaths.item(reference), Interfaces.item,
          [
            "Label": .string(item.label), "Attributes": .stringDictionary(item.attributes),
            "Type": .string(item.type), "Modified": .uint64(item.modified),
          ])
      }
    }
  }

  private func emit(_ path: String, _ interface: String, _ signal: String, _ object: String) {
    connection.emitSignal(path: path, interface: interface, name: signal, arguments: .tuple([.objectPath(object)]))
  }

  private func emitCollectionsChanged() {
    emitPropertiesChanged(
      ObjectPaths.root, Interfaces.service,
      ["Collections": .objectPaths(store.collectionNames.map(ObjectPaths.collection))])
  }

  func emitPropertiesChanged(
    _ path: String, _ interface: String, _ changed: [String: DBusValue], invalidated: [String] = []
  ) {
    let entries = changed.sorted { $0.key < $1.key }.map { DBusValue.dictEntry(.string($0.key), .variant($0.value)) }
    connection.emitSignal(
      path: path, interface: Interfaces.properties, name: "PropertiesChanged",
      arguments: .tuple([
        .string(interface), .array(elementType: "{sv}", entries),
        .array(elementType: "s", invalidated.map { .string($0) }),
      ]))
  }

  /// Serves `/aliases/NAME/ITEM` for every alias that names a collection.
  private func syncAliasRegistrations() {
    let wanted = Set(store.aliases.keys.filter { store.resolveAlias($0) != nil }.map(ObjectPaths.alias))
    for root in connection.registeredRoots where root.hasPrefix(ObjectPaths.aliases + "/") && !wanted.contains(root) {
      connection.unregisterSubtree(root)
    }
    for root in wanted { try? connection.registerSubtree(root, tree: self, descriptions: descriptions) }
  }

  // MARK: Expiry

  private func armExpiry(at time: UInt64?) {
    guard let time, let timer = expiryTimer else { return }
    let now = store.now
    let seconds = time > now ? min(time - now, 86_400) : 0
    timer.schedule(afterMilliseconds: UInt32(seconds * 1000))
  }

  private func expireDue() {
    exclusive.run { armExpiry(at: store.purgeExpired()) }
  }

  // MARK: Resolution

  /// The collection an alias or name path points to.
  func resolve(_ name: ObjectNode.CollectionName) throws(DBusError) -> String {
    switch name {
    case .named(let collection):
      guard store.collections[collection] != nil else {
        throw .noSuchObject("no collection \(ObjectPaths.collection(collection))")
      }
      return collection
    case .alias(let alias):
      guard let collection = store.resolveAlias(alias) else {
        throw .noSuchObject("no collection for alias \(ObjectPaths.alias(alias))")
      }
      return collection
    }
  }

  /// The collection and item an item path (through an alias or not) names.
  func resolveItem(path: String) throws(DBusError) -> ItemReference {
    guard case .item(let collection, let number)? = ObjectNode(path: path) else {
      throw .noSuchObject("\(path) is not an item path")
    }
    return ItemReference(collection: try resolve(collection), item: number)
  }
}

extension Daemon: ObjectTree {
  func interfaces(at path: String) -> [String]? {
    ObjectNode(path: path)?.interfaces
  }

  func children(of path: String) -> [String] {
    exclusive.run { unlockedChildren(of: path) }
  }

  func call(
    path: String, interface: String, method: String, parameters: Variant, sender: String,
    invocation: MethodInvocation
  ) {
    exclusive.run {
      unlockedCall(
        path: path, interface: interface, method: method, parameters: parameters, sender: sender, invocation: invocation)
    }
  }

  func properties(path: String, interface: String, names: [String]) throws(DBusError) -> [DBusValue] {
    try exclusive.run { () throws(DBusError) -> [DBusValue] in
      try unlockedProperties(path: path, interface: interface, names: names)
    }
  }

  func setProperty(
    path: String, interface: String, name: String, value: Variant, reply: (Result<Void, DBusError>) -> Void
  ) {
    exclusive.run {
      answeringBeforeSignals {
        reply(Result { () throws(DBusError) in try unlockedSetProperty(path: path, interface: interface, name: name, value: value) })
      }
    }
  }
}

/// The entry points' bodies, run with `exclusive` held.
extension Daemon {
  private func unlockedChildren(of path: String) -> [String] {
    switch ObjectNode(path: path) {
    case .service?: return ["collection", "aliases", "session"]
    case .container("collection")?: return store.collectionNames
    case .container("aliases")?: return store.aliases.keys.filter { store.resolveAlias($0) != nil }.sorted()
    case .container("session")?: return sessions.sessions.keys.sorted().map { "s\($0)" }
    case .collection(let name)?:
      guard let resolved = try? resolve(name), let collection = store.collections[resolved] else { return [] }
      return collection.search([:], now: store.now).map(String.init)
    default: return []
    }
  }

  private func unlockedCall(
    path: String, interface: String, method: String, parameters: Variant, sender: String,
    invocation: MethodInvocation
  ) {
    answeringBeforeSignals {
      do throws(DBusError) {
        let reply: DBusValue
        switch (ObjectNode(path: path), interface) {
        case (.service?, Interfaces.service):
          reply = try ServiceObject(daemon: self).call(method, parameters, sender: sender)
        case (.collection(let name)?, Interfaces.collection):
          reply = try CollectionObject(daemon: self, name: try resolve(name)).call(method, parameters, sender: sender)
        case (.item(let name, let number)?, Interfaces.item):
          let reference = ItemReference(collection: try resolve(name), item: number)
          reply = try ItemObject(daemon: self, reference: reference).call(method, parameters, sender: sender)
        case (.session(let number)?, Interfaces.session):
          reply = try SessionObject(daemon: self, number: number, path: path).call(method, sender: sender)
        case (.prompt?, Interfaces.prompt):
          reply = try PromptObject(path: path).call(method)
        default:
          throw .unknownMethod(interface, method, path)
        }
        invocation.reply(reply)
      } catch {
        invocation.fail(error)
      }
    }
  }

  private func unlockedProperties(path: String, interface: String, names: [String]) throws(DBusError) -> [DBusValue] {
    switch (ObjectNode(path: path), interface) {
    case (.service?, Interfaces.service):
      return try ServiceObject(daemon: self).properties(names)
    case (.collection(let collection)?, Interfaces.collection):
      return try CollectionObject(daemon: self, name: try resolve(collection)).properties(names)
    case (.item(let collection, let number)?, Interfaces.item):
      let reference = ItemReference(collection: try resolve(collection), item: number)
      return try ItemObject(daemon: self, reference: reference).properties(names)
    default:
      throw .unknownProperty(interface, names.first ?? "", path)
    }
  }

  private func unlockedSetProperty(path: String, interface: String, name: String, value: Variant) throws(DBusError) {
    switch (ObjectNode(path: path), interface) {
    case (.collection(let collection)?, Interfaces.collection):
      try CollectionObject(daemon: self, name: try resolve(collection)).setProperty(name, value)
    case (.item(let collection, let number)?, Interfaces.item):
      let reference = ItemReference(collection: try resolve(collection), item: number)
      try ItemObject(daemon: self, reference: reference).setProperty(name, value)
    default:
      throw .unknownProperty(interface, name, path)
    }
  }
}
