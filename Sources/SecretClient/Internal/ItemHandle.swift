import CLibSecret

/// A libsecret proxy of one item, kept to reach it again without a search: checking that it
/// is still the item wanted and reading or writing its secret take two round trips.
package final class ItemHandle: @unchecked Sendable {
  // SAFETY: `item` is set once in init and released only in deinit; a SecretItem is a
  // GDBusProxy, whose property cache GDBus guards with its own lock and whose calls are
  // thread-safe (libsecret's `_sync` calls each iterate a main context of their own). `owner`
  // and `service` are immutable.
  let item: UnsafeMutablePointer<CLibSecret.SecretItem>
  /// The provider's unique bus name when the proxy was made: a proxy whose name has another
  /// owner now speaks of another provider's item, whatever its path.
  let owner: String
  /// Keeps the connection the proxy uses open.
  let service: ServiceHandle
  package let path: String

  init(service: ServiceHandle, path: String) throws(SecretError) {
    self.service = service
    self.path = path
    let proxy = try service.libsecretService()
    item = try service.call(object: path) { error in
      secret_item_new_for_dbus_path_sync(proxy, path, SECRET_ITEM_NONE, nil, &error)
    }
    owner = Self.nameOwner(of: item) ?? ""
  }

  deinit { g_object_unref(UnsafeMutableRawPointer(item)) }

  /// Whether the proxy still speaks for the same provider and the item's attributes, asked of
  /// the provider now (the proxy's cache may lag behind another client's change), pass
  /// `accepts`. One round trip.
  func isCurrent(_ accepts: ([String: String]) -> Bool) throws(SecretError) -> Bool {
    guard !owner.isEmpty, Self.nameOwner(of: item) == owner else { return false }
    return accepts(try service.attributes(at: path))
  }

  /// The item's secret, loaded now through the connection's transfer session; nil when the
  /// provider gives none (locked).
  func loadSecret() throws(SecretError) -> SecretValue? {
    try service.secret(at: path)
  }

  /// Replaces the item's secret, through the connection's transfer session.
  func setSecret(_ value: SecretValue) throws(SecretError) {
    try service.setSecret(value, at: path)
  }

  private static func nameOwner(of item: UnsafeMutablePointer<CLibSecret.SecretItem>) -> String? {
    let proxy = UnsafeMutableRawPointer(item).assumingMemoryBound(to: GDBusProxy.self)
    return g_dbus_proxy_get_name_owner(proxy).map(takeString)
  }
}
