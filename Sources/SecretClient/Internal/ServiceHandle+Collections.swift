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

  /// Every collection with its label, lock state and item count, as the provider has them now.
  /// A collection deleted while they are read is left out.
  func collections() throws(SecretError) -> [CollectionInfo] {
    let paths = try property(
      "Collections", of: "org.freedesktop.Secret.Service", at: "/org/freedesktop/secrets", type: "ao")
    defer { g_variant_unref(paths) }
    var collections: [CollectionInfo] = []
    for index in 0..<g_variant_n_children(paths) {
      let child = g_variant_get_child_value(paths, index)
      let path = String(cString: g_variant_get_string(child, nil))
      g_variant_unref(child)
      do {
        collections.append(try collection(at: path))
      } catch .noSuchObject {
        continue
      }
    }
    return collections
  }

  /// Whether the collection at `path` is locked now, with one `Properties.Get`.
  func isLocked(collection path: String) throws(SecretError) -> Bool {
    let locked = try property("Locked", of: "org.freedesktop.Secret.Collection", at: path, type: "b")
    defer { g_variant_unref(locked) }
    return g_variant_get_boolean(locked) != 0
  }

  private func collection(at path: String) throws(SecretError) -> CollectionInfo {
    let properties = try allProperties(of: "org.freedesktop.Secret.Collection", at: path)
    defer { g_variant_unref(properties) }
    return CollectionInfo(
      path: path,
      label: Self.value(in: properties, "Label", type: "s") { String(cString: g_variant_get_string($0, nil)) } ?? "",
      isLocked: Self.value(in: properties, "Locked", type: "b") { g_variant_get_boolean($0) != 0 } ?? false,
      itemCount: Self.value(in: properties, "Items", type: "ao") { Int(g_variant_n_children($0)) } ?? 0
    )
  }

  /// `transform` of the entry `key` of an `a{sv}` dictionary, or `nil` when it is missing or
  /// not of `type`.
  static func value<T>(
    in dictionary: OpaquePointer, _ key: String, type: String, _ transform: (OpaquePointer) -> T
  ) -> T? {
    guard let value = type.withCString({ g_variant_lookup_value(dictionary, key, g_variant_type_checked_($0)) })
    else { return nil }
    defer { g_variant_unref(value) }
    return transform(value)
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
