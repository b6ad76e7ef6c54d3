import CLibSecret
import FoundationEssentials

extension ServiceHandle {
  /// The object paths of the items whose attributes include `attributes`, unlocked and locked.
  /// Wraps `secret_service_search_for_dbus_paths_sync`.
  func searchPaths(_ attributes: [String: String]) throws(SecretError) -> (unlocked: [String], locked: [String]) {
    let table = AttributeTable(attributes)
    var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    _ = try call { error in
      secret_service_search_for_dbus_paths_sync(service, nil, table.table, nil, &unlocked, &locked, &error) != 0
        ? true : nil
    }
    return (takeStrings(unlocked), takeStrings(locked))
  }

  /// Creates or replaces the item with exactly these attributes in `collection`.
  /// Wraps `secret_service_store_sync`.
  func store(_ value: SecretValue, attributes: [String: String], label: String, collection: String) throws(SecretError)
  {
    let table = AttributeTable(attributes)
    let secret = makeValue(value)
    defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
    _ = try call(object: collection) { error in
      secret_service_store_sync(service, nil, table.table, collection, label, secret, nil, &error) != 0 ? true : nil
    }
  }

  /// Creates a new item in the collection at `collectionPath`, never replacing another one.
  /// Wraps `secret_service_create_item_dbus_path_sync`.
  func createItem(
    in collectionPath: String, attributes: [String: String], label: String, value: SecretValue
  ) throws(SecretError) {
    let properties = PropertyTable([
      "org.freedesktop.Secret.Item.Label": g_variant_new_string(label),
      "org.freedesktop.Secret.Item.Attributes": attributesVariant(attributes),
    ])
    let secret = makeValue(value)
    defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
    let path = try call(object: collectionPath) { error in
      secret_service_create_item_dbus_path_sync(
        service, collectionPath, properties.table, secret, SECRET_ITEM_CREATE_NONE, nil, &error)
    }
    g_free(path)
  }

  /// Replaces the secret of one item. Wraps `secret_item_set_secret_sync`.
  func setSecret(_ value: SecretValue, at path: String) throws(SecretError) {
    let item = try call(object: path) { error in
      secret_item_new_for_dbus_path_sync(service, path, SECRET_ITEM_NONE, nil, &error)
    }
    defer { g_object_unref(UnsafeMutableRawPointer(item)) }
    let secret = makeValue(value)
    defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
    _ = try call(object: path) { error in secret_item_set_secret_sync(item, secret, nil, &error) != 0 ? true : nil }
  }

  /// A libsecret value holding a copy of the bytes in its secure memory; the caller releases it.
  func makeValue(_ value: SecretValue) -> OpaquePointer {
    value.bytes.withUnsafeBufferPointer { bytes in
      bytes.withMemoryRebound(to: gchar.self) { chars in
        secret_value_new(chars.baseAddress, gssize(chars.count), value.contentType)
      }
    }
  }

  /// Deletes one item. Wraps `secret_service_delete_item_dbus_path_sync`.
  func deleteItem(at path: String) throws(SecretError) {
    _ = try call(object: path) { error in
      secret_service_delete_item_dbus_path_sync(service, path, nil, &error) != 0 ? true : nil
    }
  }

  /// Items with their labels and attributes, and the secrets of the unlocked ones when
  /// `loadSecrets` is set (one `GetSecrets` through this connection's transfer session, not
  /// libsecret's). Wraps `secret_service_search_sync`.
  func searchItems(_ attributes: [String: String], loadSecrets: Bool) throws(SecretError) -> [SecretItem] {
    let table = AttributeTable(attributes)
    var error: UnsafeMutablePointer<GError>?
    let list = secret_service_search_sync(service, nil, table.table, SECRET_SEARCH_ALL, nil, &error)
    if error != nil { throw GErrorBox(error).secretError(busName: busName) }
    var items = takeObjects(list) { item in
      Self.describe(item.assumingMemoryBound(to: CLibSecret.SecretItem.self))
    }
    guard loadSecrets else { return items }
    let secrets = try secrets(at: items.filter { !$0.isLocked }.map(\.path))
    for index in items.indices { items[index].secret = secrets[items[index].path] }
    return items
  }

  private static func describe(_ item: UnsafeMutablePointer<CLibSecret.SecretItem>) -> SecretItem {
    let proxy = UnsafeMutableRawPointer(item).assumingMemoryBound(to: GDBusProxy.self)
    return SecretItem(
      path: g_dbus_proxy_get_object_path(proxy).map { String(cString: $0) } ?? "",
      label: secret_item_get_label(item).map(takeString) ?? "",
      attributes: AttributeTable.take(secret_item_get_attributes(item)),
      isLocked: secret_item_get_locked(item) != 0,
      created: Date(timeIntervalSince1970: TimeInterval(secret_item_get_created(item))),
      modified: Date(timeIntervalSince1970: TimeInterval(secret_item_get_modified(item))),
      secret: nil
    )
  }
}

/// Copies a libsecret `SecretValue` into Swift and releases the reference.
/// The C value lives in libsecret's secure memory and is wiped when released.
func takeValue(_ value: OpaquePointer) -> SecretValue {
  defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
  var length: gsize = 0
  let contentType = secret_value_get_content_type(value).map { String(cString: $0) } ?? "application/octet-stream"
  guard let bytes = secret_value_get(value, &length), length > 0 else {
    return SecretValue(bytes: [], contentType: contentType)
  }
  let buffer = UnsafeRawBufferPointer(start: bytes, count: Int(length))
  return SecretValue(bytes: Array(buffer), contentType: contentType)
}
