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
        "Get", in: Input("interface_name", .string), Input("property_name", .string), out: [Argument("value", "v")],
        access: .read,
        cost: .boundedWhen { _, _, arguments in
          guard let interface = arguments.child(0)?.string, let name = arguments.child(1)?.string else { return true }
          return Interfaces.all[interface]?.property(name)?.isBounded ?? true
        }
      ) { object, _, interface, name in try object.get(interface, name) },
      Method(
        "GetAll", in: Input("interface_name", .string), out: [Argument("properties", "a{sv}")], access: .read,
        cost: .boundedWhen { _, _, arguments in
          guard let interface = arguments.child(0)?.string else { return true }
          return Interfaces.all[interface]?.properties.allSatisfy(\.isBounded) ?? true
        }
      ) { object, _, interface in try object.getAll(interface) },
      Method(
        "Set", in: Input("interface_name", .string), Input("property_name", .string), Input("value", .variant),
        access: .write
      ) { object, _, interface, name, value in try object.set(interface, name, to: value) },
    ])

  static let introspectable = InterfaceDeclaration<AnyBusObject>(
    Interfaces.introspectable,
    methods: [
      Method("Introspect", out: [Argument("xml_data", "s")], access: .read, cost: .unbounded) { object, _ in
        .tuple([.string(object.introspection())])
      }
    ])

  static let peer = InterfaceDeclaration<AnyBusObject>(
    Interfaces.peer,
    methods: [
      Method("Ping", access: .none) { _, _ in .tuple([]) },
      Method("GetMachineId", out: [Argument("machine_uuid", "s")], access: .none) { _, _ in
        .tuple([.string(BusConnection.machineID)])
      },
    ])

  // MARK: Properties

  /// The declaration of the property interface `name`, which this object must have.
  private func declaredProperties(_ name: String) throws(DBusError) -> DeclaredInterface {
    guard node.allInterfaces.contains(name), let interface = Interfaces.all[name], !interface.properties.isEmpty
    else { throw .invalidArgs("no interface \(name) with properties on \(path)") }
    return interface
  }

  /// Get(s interface, s property) -> (v value)
  private func get(_ interfaceName: String, _ name: String) throws(DBusError) -> DBusValue {
    let interface = try declaredProperties(interfaceName)
    guard let property = interface.property(name) else { throw .unknownProperty(interface.name, name, path) }
    return .tuple([.variant(try property.get(daemon, node))])
  }

  /// GetAll(s interface) -> (a{sv} properties)
  private func getAll(_ interfaceName: String) throws(DBusError) -> DBusValue {
    let interface = try declaredProperties(interfaceName)
    let entries = try interface.properties.map { (property) throws(DBusError) -> DBusValue in
      .dictEntry(.string(property.name), .variant(try property.get(daemon, node)))
    }
    return .tuple([.array(elementType: "{sv}", entries)])
  }

  /// Set(s interface, s property, v value)
  private func set(_ interfaceName: String, _ name: String, to value: Variant) throws(DBusError) -> DBusValue {
    let interface = try declaredProperties(interfaceName)
    guard let property = interface.property(name), let set = property.set else {
      throw .invalidArgs("property \(interface.name).\(name) of \(path) is not writable")
    }
    guard value.typeString == property.type else { throw .invalidArgs("\(interface.name).\(name) is \(property.type)") }
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
