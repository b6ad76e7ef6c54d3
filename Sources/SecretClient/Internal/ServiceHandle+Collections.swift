import CLibSecret
import GLibBridge

extension ServiceHandle {
  /// The path an alias points to, or `nil` when it points nowhere.
  /// Wraps `secret_service_read_alias_dbus_path_sync`.
  func readAlias(_ alias: String) throws(SecretError) -> String? {
    let service = try libsecretService()
    var error: UnsafeMutablePointer<GError>?
    guard let path = secret_service_read_alias_dbus_path_sync(service, alias, nil, &error) else {
      if error == nil { return nil }
      throw SecretError(GLibError(consuming: error), busName: busName, object: "alias \(alias)")
    }
    return takeString(path)
  }

  /// Points `alias` at a collection, or removes it when `path` is `nil`.
  /// Wraps `secret_service_set_alias_to_dbus_path_sync`.
  func setAlias(_ alias: String, to path: String?) throws(SecretError) {
    let service = try libsecretService()
    _ = try call(object: "alias \(alias)") { error in
      secret_service_set_alias_to_dbus_path_sync(service, alias, path, nil, &error) != 0 ? true : nil
    }
  }

  /// Creates a collection and returns its path. Wraps `secret_service_create_collection_dbus_path_sync`.
  func createCollection(label: String, alias: String?) throws(SecretError) -> String {
    let service = try libsecretService()
    let properties = PropertyTable(["org.freedesktop.Secret.Collection.Label": .string(label)])
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
    var collections: [CollectionInfo] = []
    for path in paths.objectPaths ?? [] {
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
    try property("Locked", of: "org.freedesktop.Secret.Collection", at: path, type: "b").boolean ?? false
  }

  private func collection(at path: String) throws(SecretError) -> CollectionInfo {
    let properties = try allProperties(of: "org.freedesktop.Secret.Collection", at: path)
    return CollectionInfo(
      path: path, label: properties["Label"]?.string ?? "", isLocked: properties["Locked"]?.boolean ?? false,
      itemCount: properties["Items"].map { $0.isOfType("ao") ? $0.childCount : 0 } ?? 0)
  }

  /// Locks (or unlocks) collections by path and returns how many changed state.
  /// Wraps `secret_service_lock_dbus_paths_sync` and `secret_service_unlock_dbus_paths_sync`.
  func setLocked(_ locked: Bool, paths: [String]) throws(SecretError) -> Int {
    let service = try libsecretService()
    var error: UnsafeMutablePointer<GError>?
    var changed: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
    let count = withCStringArray(paths) { array in
      locked
        ? secret_service_lock_dbus_paths_sync(service, array, nil, &changed, &error)
        : secret_service_unlock_dbus_paths_sync(service, array, nil, &changed, &error)
    }
    g_strfreev(changed)
    if error != nil { throw SecretError(GLibError(consuming: error), busName: busName, object: paths.first) }
    return Int(count)
  }
}
