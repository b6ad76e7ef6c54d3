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
      Method("Delete", out: [Argument("prompt", "o")], access: .write) { collection, _, _ throws(DBusError) in
        try collection.delete()
      },
      Method(
        "SearchItems", in: [Argument("attributes", "a{ss}")], out: [Argument("results", "ao")], access: .read,
        cost: .boundedWhen { daemon, _, arguments in daemon.isSmallSearch(arguments.child(0)) }
      ) { collection, arguments, _ throws(DBusError) in try collection.searchItems(arguments) },
      Method(
        "CreateItem", in: [Argument("properties", "a{sv}"), Argument("secret", "(oayays)"), Argument("replace", "b")],
        out: [Argument("item", "o"), Argument("prompt", "o")], access: .write
      ) { collection, arguments, context throws(DBusError) in try collection.createItem(arguments, context: context) },
    ],
    properties: [
      Property("Items", "ao", isBounded: false) { collection throws(DBusError) in collection.items() },
      Property(
        "Label", "s", get: { collection throws(DBusError) in .string(try collection.stored().label) },
        set: { collection, value throws(DBusError) in try collection.setLabel(value) }),
      Property("Locked", "b") { collection throws(DBusError) in .boolean(try collection.stored().locked) },
      Property("Created", "t") { collection throws(DBusError) in .uint64(try collection.stored().created) },
      Property("Modified", "t") { collection throws(DBusError) in .uint64(try collection.stored().modified) },
    ],
    signals: ["ItemCreated", "ItemDeleted", "ItemChanged"].map { SignalDeclaration($0, [Argument("item", "o")]) })

  private func stored() throws(DBusError) -> StoredCollection {
    guard let collection = daemon.store.collections[name] else { throw .noObject(path) }
    return collection
  }

  private func items() -> DBusValue {
    let numbers = daemon.store.collections[name]?.search([:], now: daemon.store.now) ?? []
    return .objectPaths(numbers.map { ObjectPaths.item(ItemReference(collection: name, item: $0)) })
  }

  private func setLabel(_ value: Variant) throws(DBusError) {
    guard let label = value.string, value.isOfType("s") else { throw .invalidArgs("Label is a string") }
    do throws(StoreError) { try daemon.store.setCollectionLabel(name, label) } catch { throw DBusError(error) }
  }

  /// Delete() -> (o prompt)
  private func delete() throws(DBusError) -> DBusValue {
    do throws(StoreError) { try daemon.store.deleteCollection(name) } catch { throw DBusError(error) }
    Log.info("collection \(path) deleted")
    return .tuple([.objectPath(ObjectPaths.none)])
  }

  /// SearchItems(a{ss}) -> (ao results)
  private func searchItems(_ arguments: Variant) throws(DBusError) -> DBusValue {
    guard let attributes = arguments.child(0)?.stringDictionary else { throw .invalidArgs("SearchItems takes (a{ss})") }
    do throws(StoreError) { try daemon.store.checkQuery(attributes) } catch { throw DBusError(error) }
    let found = try stored().search(attributes, now: daemon.store.now)
    return .tuple([.objectPaths(found.map { ObjectPaths.item(ItemReference(collection: name, item: $0)) })])
  }

  /// CreateItem(a{sv} properties, (oayays) secret, b replace) -> (o item, o prompt)
  private func createItem(_ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    guard let properties = arguments.child(0)?.variantDictionary, let replace = arguments.child(2)?.boolean else {
      throw .invalidArgs("CreateItem takes (a{sv}(oayays)b)")
    }
    let item = try ItemProperties(properties)
    let (secret, contentType) = try SecretWireFormat.read(arguments.child(1), daemon: daemon, context: context)
    do throws(StoreError) {
      let result = try daemon.store.createItem(
        in: name, label: item.label ?? "", attributes: item.attributes ?? [:], type: item.type ?? "",
        contentType: contentType, secret: secret, replace: replace)
      return .tuple([
        .objectPath(ObjectPaths.item(ItemReference(collection: name, item: result.item))),
        .objectPath(ObjectPaths.none),
      ])
    } catch {
      throw DBusError(error)
    }
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
