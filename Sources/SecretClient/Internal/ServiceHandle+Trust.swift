// Who the provider is, asked of the bus before a secret crosses it: the owner of the provider's
// name must run as this process's own user. Otherwise a process of another user that takes the
// name first (before activation, or in the moment after a crash) would receive every secret
// written and answer every read.
import CLibSecret

/// What the bus says about the connection behind a unique name.
struct OwnerCredentials: Sendable, Hashable {
  var uid: UInt32?
  var pid: Int32?
}

extension ServiceHandle {
  /// The unique name that owns the provider's name now, once the bus has said that it runs as
  /// this process's user; a provider that is not running yet is started first (activation).
  /// Secrets then go to that unique name only, never to whoever owns the name later.
  func trustedProvider() throws(SecretError) -> String {
    let owner = try currentOwner()
    let credentials = try credentials(of: owner)
    guard credentials.uid == ProviderInfo.currentUser else {
      throw .providerOfAnotherUser(describe(owner: owner, credentials))
    }
    return owner
  }

  /// Which connection and process own the provider's name, and as which user.
  func providerInfo() throws(SecretError) -> ProviderInfo {
    let owner = try nameOwner()
    return describe(owner: owner, try credentials(of: owner))
  }

  private func describe(owner: String, _ credentials: OwnerCredentials) -> ProviderInfo {
    ProviderInfo(
      busName: busName, uniqueName: owner, pid: credentials.pid,
      executable: credentials.pid.flatMap(Self.executable(of:)), uid: credentials.uid)
  }

  /// The owner of the provider's name: the one the connection's proxy learnt when it was made
  /// (no round trip), else asked of the bus, starting the provider when the bus can (a
  /// `Peer.Ping` sent to the name activates it) and nobody owns it yet. An owner learnt earlier
  /// is as safe as one asked now: secrets go to that unique name only, and a name whose owner
  /// has gone answers nothing, which makes the client reconnect.
  private func currentOwner() throws(SecretError) -> String {
    let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
    if let owner = g_dbus_proxy_get_name_owner(proxy).map(takeString) { return owner }
    do {
      return try nameOwner()
    } catch .serviceUnavailable {
      let ping = try callObject("/", "org.freedesktop.DBus.Peer", "Ping", g_variant_new_tuple(nil, 0), replyType: "()")
      g_variant_unref(ping)
      return try nameOwner()
    }
  }

  /// Wraps `org.freedesktop.DBus.GetNameOwner`.
  private func nameOwner() throws(SecretError) -> String {
    let reply = try callBus("GetNameOwner", argument: busName, replyType: "(s)")
    defer { g_variant_unref(reply) }
    return stringValue(of: reply, at: 0)
  }

  /// The user and process behind `uniqueName`, asked once per name: the bus never gives a
  /// unique name to a second connection. Wraps `org.freedesktop.DBus.GetConnectionCredentials`.
  private func credentials(of uniqueName: String) throws(SecretError) -> OwnerCredentials {
    if let known = owners.withLock({ $0[uniqueName] }) { return known }
    let reply = try callBus("GetConnectionCredentials", argument: uniqueName, replyType: "(a{sv})")
    defer { g_variant_unref(reply) }
    let dictionary = g_variant_get_child_value(reply, 0)
    defer { g_variant_unref(dictionary) }
    let credentials = OwnerCredentials(
      uid: Self.uint32(in: dictionary, "UnixUserID"),
      pid: Self.uint32(in: dictionary, "ProcessID").map { Int32(bitPattern: $0) })
    owners.withLock { $0[uniqueName] = credentials }
    return credentials
  }

  private static func uint32(in dictionary: OpaquePointer?, _ key: String) -> UInt32? {
    guard let value = "u".withCString({ g_variant_lookup_value(dictionary, key, g_variant_type_checked_($0)) })
    else { return nil }
    defer { g_variant_unref(value) }
    return g_variant_get_uint32(value)
  }
}
