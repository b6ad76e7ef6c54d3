import CLibSecret

extension ServiceHandle {
  /// The path an alias points to, or `nil` when it points nowhere.
  /// Wraps `secret_service_read_alias_dbus_path_sync`.
  func readAlias(_ alias: String) throws(SecretError) -> String? {
    var error: UnsafeMutablePointer<GError>?
    guard let path = secret_service_read_alias_dbus_path_sync(service, alias, nil, &error) else {
      if error == nil { return nil }
      throw GErrorBox(error).secretError(busName: busName, object: "alias \(alias)")
    }
    return takeString(path)
  }

  /// Points `alias` at a collection, or removes it when `path` is `nil`.
  /// Wraps `secret_service_set_alias_to_dbus_path_sync`.
  func setAlias(_ alias: String, to path: String?) throws(SecretError) {
    _ = try call(object: "alias \(alias)") { error in
      secret_service_set_alias_to_dbus_path_sync(service, alias, path, nil, &error) != 0 ? true : nil
    }
  }

  /// Creates a collection and returns its path. Wraps `secret_service_create_collection_dbus_path_sync`.
  func createCollection(label: String, alias: String?) throws(SecretError) -> String {
    let properties = PropertyTable(["org.freedesktop.Secret.Collection.Label": g_variant_new_string(label)])
    let path = try call { error in
      secret_service_create_collection_dbus_path_sync(
        service, properties.table, alias, SECRET_COLLECTION_CREATE_NONE, nil, &error)
    }
    return takeString(path)
  }

  /// Every collection with its label, lock state and item count.
  /// Wraps `secret_service_load_collections_sync` and `secret_service_get_collections`.
  func collections() throws(SecretError) -> [CollectionInfo] {
    _ = try call { error in secret_service_load_collections_sync(service, nil, &error) != 0 ? true : nil }
    return takeObjects(secret_service_get_collections(service)) { object in
      let collection = object.assumingMemoryBound(to: CLibSecret.SecretCollection.self)
      let proxy = object.assumingMemoryBound(to: GDBusProxy.self)
      return CollectionInfo(
        path: g_dbus_proxy_get_object_path(proxy).map { String(cString: $0) } ?? "",
        label: secret_collection_get_label(collection).map(takeString) ?? "",
        isLocked: secret_collection_get_locked(collection) != 0,
        itemCount: Self.itemCount(proxy)
      )
    }
  }

  private static func itemCount(_ proxy: UnsafeMutablePointer<GDBusProxy>) -> Int {
    guard let items = g_dbus_proxy_get_cached_property(proxy, "Items") else { return 0 }
    defer { g_variant_unref(items) }
    return Int(g_variant_n_children(items))
  }

  /// Locks (or unlocks) collections by path and returns how many changed state.
  /// Wraps `secret_service_lock_dbus_paths_sync` and `secret_service_unlock_dbus_paths_sync`.
  func setLocked(_ locked: Bool, paths: [String]) throws(SecretError) -> Int {
    var error: UnsafeMutablePointer<GError>?
    var changed: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    let count = withCStringArray(paths) { array in
      locked
        ? secret_service_lock_dbus_paths_sync(service, array, nil, &changed, &error)
        : secret_service_unlock_dbus_paths_sync(service, array, nil, &changed, &error)
    }
    g_strfreev(changed)
    if error != nil { throw GErrorBox(error).secretError(busName: busName, object: paths.first) }
    return Int(count)
  }
}
