// org.freedesktop.Secret.Collection at /org/freedesktop/secrets/collection/NAME
// (and at /org/freedesktop/secrets/aliases/ALIAS for the collection it names).

struct CollectionObject {
  let daemon: Daemon
  let name: String

  var path: String { ObjectPaths.collection(name) }

  // MARK: Members on the bus

  func call(_ method: String, _ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    switch method {
    case "Delete": return try delete()
    case "SearchItems": return try searchItems(arguments)
    case "CreateItem": return try createItem(arguments, context: context)
    default: throw .unknownMethod(Interfaces.collection, method, path)
    }
  }

  /// The values of `properties`, read from one lookup of the collection.
  func properties(_ properties: [String]) throws(DBusError) -> [DBusValue] {
    guard let collection = daemon.store.collections[name] else { throw .noSuchObject("no collection \(path)") }
    return try properties.map { (property) throws(DBusError) -> DBusValue in
      switch property {
      case "Items":
        return .objectPaths(
          collection.search([:], now: daemon.store.now).map {
            ObjectPaths.item(ItemReference(collection: name, item: $0))
          })
      case "Label": return .string(collection.label)
      case "Locked": return .boolean(collection.locked)
      case "Created": return .uint64(collection.created)
      case "Modified": return .uint64(collection.modified)
      default: throw .unknownProperty(Interfaces.collection, property, path)
      }
    }
  }

  func setProperty(_ property: String, _ value: Variant) throws(DBusError) {
    switch property {
    case "Label":
      guard let label = value.string, value.isOfType("s") else { throw .invalidArgs("Label is a string") }
      do throws(StoreError) { try daemon.store.setCollectionLabel(name, label) } catch { throw DBusError(error) }
    default:
      throw .invalidArgs("property \(property) of \(path) is read-only")
    }
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
    guard let collection = daemon.store.collections[name] else { throw .noSuchObject("no collection \(path)") }
    let found = collection.search(attributes, now: daemon.store.now)
    return .tuple([.objectPaths(found.map { ObjectPaths.item(ItemReference(collection: name, item: $0)) })])
  }

  /// CreateItem(a{sv} properties, (oayays) secret, b replace) -> (o item, o prompt)
  private func createItem(_ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    guard let properties = arguments.child(0)?.variantDictionary, let replace = arguments.child(2)?.boolean else {
      throw .invalidArgs("CreateItem takes (a{sv}(oayays)b)")
    }
    let item = try ItemProperties(properties)
    let (secret, contentType) = try SecretValue.read(arguments.child(1), daemon: daemon, context: context)
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
