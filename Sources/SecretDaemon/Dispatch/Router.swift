// Routing: which object and interface a call is for, whether it has the declared shape, which
// lock it needs, and the standard interfaces (Properties, Introspectable, Peer). Every call a
// client makes passes through `execute`, on one of the scheduler's threads.

/// What one call carries besides its arguments.
final class CallContext {
  let sender: String
  /// A secret arrived in clear (a `plain` session): the bytes of the message that carried it
  /// must be scrubbed from the bus reader's buffer once the call is answered.
  var receivedPlainSecret = false

  init(sender: String) { self.sender = sender }
}

extension Daemon {
  /// How a call touches the store: not at all, reading, or writing.
  enum StoreAccess {
    case none, read, write
  }

  /// Answers `call`, then announces what it changed.
  func execute(_ call: IncomingCall) {
    let context = CallContext(sender: call.sender)
    let node = ObjectNode(path: call.path)
    var access = StoreAccess.none
    let outcome: Result<DBusValue, DBusError>
    switch Result(catching: { () throws(DBusError) in try interface(of: call, at: node) }) {
    case .failure(let error):
      outcome = .failure(error)
    case .success(let interface):
      let route = { () -> Result<DBusValue, DBusError> in
        Result { () throws(DBusError) in try self.route(call, node, interface, context) }
      }
      access = Self.access(interface, call.member)
      switch access {
      case .none: outcome = route()
      case .read: outcome = storeLock.reading(route)
      case .write: outcome = storeLock.writing(route)
      }
    }
    call.answer(outcome, maximumBytes: configuration.limits.maxReplySize)
    // Only writers announce: a reader never waits for another call's signals.
    if access == .write { signals.flush() }
    if context.receivedPlainSecret { scrubReadBuffer(coveringAtLeast: call.bodySize) }
  }

  static func access(_ interface: String, _ member: String) -> StoreAccess {
    switch (interface, member) {
    case (Interfaces.peer, _), (Interfaces.service, "OpenSession"), (Interfaces.session, _): .none
    case (Interfaces.service, "CreateCollection"), (Interfaces.service, "Lock"), (Interfaces.service, "Unlock"),
      (Interfaces.service, "SetAlias"), (Interfaces.collection, "Delete"), (Interfaces.collection, "CreateItem"),
      (Interfaces.item, "Delete"), (Interfaces.item, "SetSecret"), (Interfaces.properties, "Set"):
      .write
    default: .read
    }
  }

  /// The interface a call names; for a call that names none, the one interface of the object
  /// that has a member of that name.
  private func interface(of call: IncomingCall, at node: ObjectNode?) throws(DBusError) -> String {
    guard let node else { throw .unknownObject(call.path) }
    guard call.interface.isEmpty else { return call.interface }
    let candidates = node.allInterfaces.filter { descriptions.methods[$0]?[call.member] != nil }
    guard candidates.count == 1 else { throw .unknownMethod("(no interface)", call.member, call.path) }
    return candidates[0]
  }

  private func route(
    _ call: IncomingCall, _ node: ObjectNode?, _ interface: String, _ context: CallContext
  ) throws(DBusError) -> DBusValue {
    guard let node else { throw .unknownObject(call.path) }
    guard node.allInterfaces.contains(interface) else { throw .unknownInterface(interface, call.path) }
    guard let expected = descriptions.methods[interface]?[call.member] else {
      throw .unknownMethod(interface, call.member, call.path)
    }
    guard call.signature == expected else {
      throw .invalidArgs("\(interface).\(call.member) takes \(expected), not \(call.signature)")
    }
    switch interface {
    case Interfaces.peer: return try peer(call.member)
    case Interfaces.introspectable: return .tuple([.string(introspection(of: node))])
    case Interfaces.properties: return try properties(call, node)
    default: return try callObject(node, call.member, call.body, context)
    }
  }

  private func callObject(
    _ node: ObjectNode, _ method: String, _ arguments: Variant, _ context: CallContext
  ) throws(DBusError) -> DBusValue {
    switch node {
    case .service:
      return try ServiceObject(daemon: self).call(method, arguments, context: context)
    case .collection(let name):
      return try CollectionObject(daemon: self, name: try resolve(name)).call(method, arguments, context: context)
    case .item(let name, let number):
      let reference = ItemReference(collection: try resolve(name), item: number)
      return try ItemObject(daemon: self, reference: reference).call(method, arguments, context: context)
    case .session:
      return try SessionObject(daemon: self, path: ObjectPaths.canonical(node)).call(method, context: context)
    case .prompt:
      return try PromptObject(path: ObjectPaths.canonical(node)).call(method)
    case .container:
      throw .unknownMethod(Interfaces.service, method, ObjectPaths.canonical(node))
    }
  }

  // MARK: Standard interfaces

  /// org.freedesktop.DBus.Peer: Ping() and GetMachineId() -> (s).
  private func peer(_ member: String) throws(DBusError) -> DBusValue {
    switch member {
    case "Ping": return .tuple([])
    default: return .tuple([.string(BusConnection.machineID)])
    }
  }

  /// The XML of the object at `node`, with its children.
  private func introspection(of node: ObjectNode) -> String {
    let children: [String]
    switch node {
    case .service: children = ["collection", "aliases", "session"]
    case .container("collection"): children = store.collectionNames
    case .container("aliases"): children = store.aliases.keys.filter { store.resolveAlias($0) != nil }.sorted()
    case .container("session"): children = sessions.numbers.map { "s\($0)" }
    case .collection(let name):
      guard let resolved = try? resolve(name), let collection = store.collections[resolved] else {
        children = []
        break
      }
      children = collection.search([:], now: store.now).map(String.init)
    default: children = []
    }
    return descriptions.introspection(interfaces: node.allInterfaces, children: children)
  }

  /// org.freedesktop.DBus.Properties: Get(ss) -> (v), GetAll(s) -> (a{sv}), Set(ssv).
  private func properties(_ call: IncomingCall, _ node: ObjectNode) throws(DBusError) -> DBusValue {
    guard let interface = call.body.child(0)?.string else { throw .invalidArgs("no interface name") }
    guard node.allInterfaces.contains(interface), let declared = descriptions.properties[interface] else {
      throw .invalidArgs("no interface \(interface) with properties on \(call.path)")
    }
    switch call.member {
    case "Get":
      guard let name = call.body.child(1)?.string, declared[name]?.readable == true else {
        throw .unknownProperty(interface, call.body.child(1)?.string ?? "", call.path)
      }
      let values = try objectProperties(node, interface, [name])
      return .tuple(values.map(DBusValue.variant))
    case "GetAll":
      let names = (descriptions.propertyNames[interface] ?? []).filter { declared[$0]?.readable == true }
      let values = try objectProperties(node, interface, names)
      return .tuple([.array(elementType: "{sv}", zip(names, values).map { .dictEntry(.string($0), .variant($1)) })])
    default:
      guard let name = call.body.child(1)?.string, let property = declared[name], property.writable else {
        throw .invalidArgs("property \(interface).\(call.body.child(1)?.string ?? "") of \(call.path) is not writable")
      }
      guard let value = call.body.child(2)?.unboxed, value.typeString == property.signature else {
        throw .invalidArgs("\(interface).\(name) is \(property.signature)")
      }
      try setObjectProperty(node, interface, name, value)
      return .tuple([])
    }
  }

  private func objectProperties(_ node: ObjectNode, _ interface: String, _ names: [String]) throws(DBusError)
    -> [DBusValue]
  {
    switch node {
    case .service: return try ServiceObject(daemon: self).properties(names)
    case .collection(let name): return try CollectionObject(daemon: self, name: try resolve(name)).properties(names)
    case .item(let name, let number):
      return try ItemObject(daemon: self, reference: ItemReference(collection: try resolve(name), item: number))
        .properties(names)
    default: throw .unknownProperty(interface, names.first ?? "", ObjectPaths.canonical(node))
    }
  }

  private func setObjectProperty(_ node: ObjectNode, _ interface: String, _ name: String, _ value: Variant)
    throws(DBusError)
  {
    switch node {
    case .collection(let collection):
      try CollectionObject(daemon: self, name: try resolve(collection)).setProperty(name, value)
    case .item(let collection, let number):
      try ItemObject(daemon: self, reference: ItemReference(collection: try resolve(collection), item: number))
        .setProperty(name, value)
    default:
      throw .unknownProperty(interface, name, ObjectPaths.canonical(node))
    }
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
