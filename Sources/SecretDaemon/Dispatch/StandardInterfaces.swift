// org.freedesktop.DBus.Properties, .Introspectable and .Peer, on every object: declared like the
// Secret Service's own interfaces, and answered from those interfaces' declarations.
import GLibBridge

/// Any object of the tree, for the interfaces every object has.
struct AnyBusObject: BusObject {
  let daemon: Daemon
  let node: ObjectNode

  init(daemon: Daemon, node: ObjectNode) throws(DBusError) {
    switch node {
    case .collection: _ = try CollectionObject(daemon: daemon, node: node)
    case .item: _ = try ItemObject(daemon: daemon, node: node)
    case .service, .container, .session, .prompt: break
    }
    self.daemon = daemon
    self.node = node
  }

  var path: String { ObjectPaths.canonical(node) }

  static let properties = InterfaceDeclaration<AnyBusObject>(
    Interfaces.properties,
    methods: [
      Method(
        "Get", in: [Argument("interface_name", "s"), Argument("property_name", "s")], out: [Argument("value", "v")],
        access: .read,
        cost: .boundedWhen { _, _, arguments in
          guard let interface = arguments.child(0)?.string, let name = arguments.child(1)?.string else { return true }
          return Interfaces.all[interface]?.property(name)?.isBounded ?? true
        }
      ) { object, arguments, _ throws(DBusError) in try object.get(arguments) },
      Method(
        "GetAll", in: [Argument("interface_name", "s")], out: [Argument("properties", "a{sv}")], access: .read,
        cost: .boundedWhen { _, _, arguments in
          guard let interface = arguments.child(0)?.string else { return true }
          return Interfaces.all[interface]?.properties.allSatisfy(\.isBounded) ?? true
        }
      ) { object, arguments, _ throws(DBusError) in try object.getAll(arguments) },
      Method(
        "Set", in: [Argument("interface_name", "s"), Argument("property_name", "s"), Argument("value", "v")],
        access: .write
      ) { object, arguments, _ throws(DBusError) in try object.set(arguments) },
    ],
    signals: [
      SignalDeclaration(
        "PropertiesChanged",
        [
          Argument("interface_name", "s"), Argument("changed_properties", "a{sv}"),
          Argument("invalidated_properties", "as"),
        ])
    ])

  static let introspectable = InterfaceDeclaration<AnyBusObject>(
    Interfaces.introspectable,
    methods: [
      Method("Introspect", out: [Argument("xml_data", "s")], access: .read, cost: .unbounded) {
        object, _, _ throws(DBusError) in .tuple([.string(object.introspection())])
      }
    ])

  static let peer = InterfaceDeclaration<AnyBusObject>(
    Interfaces.peer,
    methods: [
      Method("Ping", access: .none) { _, _, _ throws(DBusError) in .tuple([]) },
      Method("GetMachineId", out: [Argument("machine_uuid", "s")], access: .none) { _, _, _ throws(DBusError) in
        .tuple([.string(BusConnection.machineID)])
      },
    ])

  // MARK: Properties

  /// The declaration of a property interface `arguments` names, which this object must have.
  private func declaredProperties(_ arguments: Variant) throws(DBusError) -> DeclaredInterface {
    guard let name = arguments.child(0)?.string else { throw .invalidArgs("no interface name") }
    guard node.allInterfaces.contains(name), let interface = Interfaces.all[name], !interface.properties.isEmpty
    else { throw .invalidArgs("no interface \(name) with properties on \(path)") }
    return interface
  }

  /// Get(s interface, s property) -> (v value)
  private func get(_ arguments: Variant) throws(DBusError) -> DBusValue {
    let interface = try declaredProperties(arguments)
    let name = arguments.child(1)?.string ?? ""
    guard let property = interface.property(name) else { throw .unknownProperty(interface.name, name, path) }
    return .tuple([.variant(try property.get(daemon, node))])
  }

  /// GetAll(s interface) -> (a{sv} properties)
  private func getAll(_ arguments: Variant) throws(DBusError) -> DBusValue {
    let interface = try declaredProperties(arguments)
    let entries = try interface.properties.map { (property) throws(DBusError) -> DBusValue in
      .dictEntry(.string(property.name), .variant(try property.get(daemon, node)))
    }
    return .tuple([.array(elementType: "{sv}", entries)])
  }

  /// Set(s interface, s property, v value)
  private func set(_ arguments: Variant) throws(DBusError) -> DBusValue {
    let interface = try declaredProperties(arguments)
    let name = arguments.child(1)?.string ?? ""
    guard let property = interface.property(name), let set = property.set else {
      throw .invalidArgs("property \(interface.name).\(name) of \(path) is not writable")
    }
    guard let value = arguments.child(2)?.unboxed, value.typeString == property.type else {
      throw .invalidArgs("\(interface.name).\(name) is \(property.type)")
    }
    try set(daemon, node, value)
    return .tuple([])
  }

  // MARK: Introspection

  /// The XML of this object, with its children.
  private func introspection() -> String {
    let store = daemon.store
    let children: [String]
    switch node {
    case .service: children = ["collection", "aliases", "session"]
    case .container("collection"): children = store.collectionNames
    case .container("aliases"): children = store.aliases.keys.filter { store.resolveAlias($0) != nil }.sorted()
    case .container("session"): children = daemon.sessions.numbers.map { "s\($0)" }
    case .collection(let name):
      let collection = (try? daemon.resolve(name)).flatMap { store.collections[$0] }
      children = collection?.search([:], now: store.now).map(String.init) ?? []
    default: children = []
    }
    return Interfaces.introspection(interfaces: node.allInterfaces, children: children)
  }
}
