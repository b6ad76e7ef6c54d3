import CLibSecret
import FoundationEssentials
import GLibBridge

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
    if error != nil { throw SecretError(GLibError(consuming: error), busName: busName) }
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
