// org.freedesktop.Secret.Collection at /org/freedesktop/secrets/collection/NAME
// (and at /org/freedesktop/secrets/aliases/ALIAS for the collection it names).
import GLibBridge

struct CollectionObject: BusObject {
  let daemon: Daemon
  let name: String

  init(daemon: Daemon, node: ObjectNode) throws(DBusError) {
    guard case .collection(let collection) = node, let name = try? daemon.resolve(collection) else {
      throw .noObject(ObjectPaths.canonical(node))
    }
    self.daemon = daemon
    self.name = name
  }

  var path: String { ObjectPaths.collection(name) }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<CollectionObject>(
    Interfaces.collection,
    methods: [
      Method("Delete", out: [Argument("prompt", "o")], access: .write) { collection, _ in try collection.delete() },
      Method(
        "SearchItems", in: Input("attributes", .stringDictionary), out: [Argument("results", "ao")], access: .read,
        cost: .boundedWhen { daemon, _, arguments in daemon.isSmallSearch(arguments.child(0)) }
      ) { collection, _, attributes in try collection.searchItems(attributes) },
      Method(
        "CreateItem", in: Input("properties", .variantDictionary), Input("secret", .secret),
        Input("replace", .boolean), out: [Argument("item", "o"), Argument("prompt", "o")], access: .write
      ) { collection, context, properties, secret, replace in
        try collection.createItem(properties, secret: secret, replace: replace, context: context)
      },
    ],
    properties: [
      Property("Items", "ao", isBounded: false) { collection in collection.items() },
      Property(
        "Label", .string, get: { collection in .string(try collection.stored().label) },
        set: { collection, label in try collection.daemon.store.setCollectionLabel(collection.name, label) }),
      Property("Locked", "b") { collection in .boolean(try collection.stored().locked) },
      Property("Created", "t") { collection in .uint64(try collection.stored().created) },
      Property("Modified", "t") { collection in .uint64(try collection.stored().modified) },
    ])

  private func stored() throws(DBusError) -> StoredCollection {
    guard let collection = daemon.store.collections[name] else { throw .noObject(path) }
    return collection
  }

  private func items() -> DBusValue {
    let numbers = daemon.store.collections[name]?.search([:], now: daemon.store.now) ?? []
    return .objectPaths(numbers.map { ObjectPaths.item(ItemReference(collection: name, item: $0)) })
  }

  /// Delete() -> (o prompt)
  private func delete() throws -> DBusValue {
    try daemon.store.deleteCollection(name)
    Log.info("collection \(path) deleted")
    return .tuple([.objectPath(ObjectPaths.none)])
  }

  /// SearchItems(a{ss}) -> (ao results)
  private func searchItems(_ attributes: [String: String]) throws -> DBusValue {
    try daemon.store.checkQuery(attributes)
    let found = try stored().search(attributes, now: daemon.store.now)
    return .tuple([.objectPaths(found.map { ObjectPaths.item(ItemReference(collection: name, item: $0)) })])
  }

  /// CreateItem(a{sv} properties, (oayays) secret, b replace) -> (o item, o prompt)
  private func createItem(
    _ properties: [String: Variant], secret: Variant, replace: Bool, context: CallContext
  ) throws -> DBusValue {
    let item = try ItemProperties(properties)
    let (secret, contentType) = try SecretWireFormat.read(secret, daemon: daemon, context: context)
    let result = try daemon.store.createItem(
      in: name, label: item.label ?? "", attributes: item.attributes ?? [:], type: item.type ?? "",
      contentType: contentType, secret: secret, replace: replace)
    return .tuple([
      .objectPath(ObjectPaths.item(ItemReference(collection: name, item: result.item))), .objectPath(ObjectPaths.none),
    ])
  }
}

/// The item properties CreateItem accepts, checked for type.
struct ItemProperties {
  var label: String?
  var attributes: [String: String]?
  var type: String?

  init(_ properties: [String: Variant]) throws(DBusError) {
    if let value = properties["org.freedesktop.Secret.Item.Label"] {
      guard value.isOfType("s"), let label = value.string else {
        throw .invalidArgs("org.freedesktop.Secret.Item.Label must be a string")
      }
      self.label = label
    }
    if let value = properties["org.freedesktop.Secret.Item.Attributes"] {
      guard let attributes = value.stringDictionary else {
        throw .invalidArgs("org.freedesktop.Secret.Item.Attributes must be a{ss}")
      }
      self.attributes = attributes
    }
    if let value = properties["org.freedesktop.Secret.Item.Type"] {
      guard value.isOfType("s"), let type = value.string else {
        throw .invalidArgs("org.freedesktop.Secret.Item.Type must be a string")
      }
      self.type = type
    }
  }
}
