// Routing: which object and declared method a call is for, whether it has the declared shape,
// which lock it needs, and whether it is small enough for the reading thread. Every call a
// client makes passes through `execute`, on one of the scheduler's threads or, when all is idle
// and the call is small, on the thread that reads the bus.
import GLibBridge

/// What one call carries besides its arguments.
final class CallContext {
  let sender: String
  /// A secret arrived in clear (a `plain` session): the bytes of the message that carried it
  /// must be scrubbed from the bus reader's buffer once the call is answered.
  var receivedPlainSecret = false

  init(sender: String) { self.sender = sender }
}

extension Daemon {
  /// Answers `call`, then announces what it changed.
  func execute(_ call: IncomingCall) {
    let context = CallContext(sender: call.sender)
    var access = StoreAccess.none
    let outcome: Result<DBusValue, DBusError>
    switch Result(catching: { () throws(DBusError) in
      try target(path: call.path, interface: call.interface, member: call.member, arguments: call.body)
    }) {
    case .failure(let error):
      outcome = .failure(error)
    case .success(let (node, method)):
      let run = { () -> Result<DBusValue, DBusError> in
        Result { () throws(DBusError) in try method.run(self, node, call.body, context) }
      }
      access = method.access
      switch access {
      case .none: outcome = run()
      case .read: outcome = storeLock.reading(run)
      case .write: outcome = storeLock.writing(run)
      }
    }
    call.answer(outcome, maximumBytes: configuration.limits.maxReplySize)
    // Only writers announce: a reader never waits for another call's signals.
    if access == .write { announceChanges() }
    if context.receivedPlainSecret { scrubReadBuffer(coveringAtLeast: call.bodySize) }
  }

  /// How much a call weighs, from its declaration, found once: `quick` when it writes nothing
  /// and its declared cost is small for these arguments (it may be answered on the reading
  /// thread), `heavy` when that cost is large (a listing, a read of many items: such calls run
  /// only a few at a time, `ClientScheduler`), `light` otherwise, a call whose size cannot be
  /// told now included. Never waits for the store's lock.
  func weight(path: String, interface: String, member: String, arguments: Variant) -> CallWeight {
    guard let (_, method) = try? target(path: path, interface: interface, member: member, arguments: arguments)
    else { return .light }
    switch isSmall(method, path, arguments) {
    case true?: return method.access == .write ? .light : .quick
    case false?: return .heavy
    case nil: return .light
    }
  }

  /// Whether the declared cost of `method` is small for these arguments; nil when that needs
  /// the store and a writer holds it.
  private func isSmall(_ method: DeclaredMethod, _ path: String, _ arguments: Variant) -> Bool? {
    switch method.cost {
    case .bounded: true
    case .unbounded: false
    case .boundedWhen(let isSmall): storeLock.tryReading { isSmall(self, path, arguments) }
    }
  }

  /// The object and declared method a call names, its arguments checked against the declaration.
  func target(path: String, interface: String, member: String, arguments: Variant) throws(DBusError) -> (
    ObjectNode, DeclaredMethod
  ) {
    guard let node = ObjectNode(path: path) else { throw .noObject(path) }
    let interface = try self.interface(interface, member, at: node, path)
    guard node.allInterfaces.contains(interface), let declared = Interfaces.all[interface] else {
      throw .unknownInterface(interface, path)
    }
    guard let method = declared.method(member) else { throw .unknownMethod(interface, member, path) }
    guard arguments.typeString == method.inputSignature else {
      throw .invalidArgs("\(interface).\(member) takes \(method.inputSignature), not \(arguments.typeString)")
    }
    return (node, method)
  }

  /// The interface a call names; for a call that names none, the one interface of the object
  /// that has a member of that name.
  private func interface(_ named: String, _ member: String, at node: ObjectNode, _ path: String) throws(DBusError)
    -> String
  {
    guard named.isEmpty else { return named }
    let candidates = node.allInterfaces.filter { Interfaces.all[$0]?.method(member) != nil }
    guard candidates.count == 1 else { throw .unknownMethod("(no interface)", member, path) }
    return candidates[0]
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

  /// The session at `path`, which `caller` must own; marks it used.
  func session(at path: String, caller: String) throws -> TransferSession {
    guard case .session(let number)? = ObjectNode(path: path) else {
      throw DBusError.noSession(path: path)
    }
    return try sessions.session(number, caller: caller)
  }

  /// The collection and item an item path (through an alias or not) names.
  func resolveItem(path: String) throws(DBusError) -> ItemReference {
    guard case .item(let collection, let number)? = ObjectNode(path: path) else {
      throw .noSuchObject("\(path) is not an item path")
    }
    return ItemReference(collection: try resolve(collection), item: number)
  }
}
