// Who the provider is, asked of the bus before a secret crosses it: the owner of the provider's
// name must run as this process's own user. Otherwise a process of another user that takes the
// name first (before activation, or in the moment after a crash) would receive every secret
// written and answer every read.
import CLibSecret
import GLibBridge

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
      _ = try callObject("/", "org.freedesktop.DBus.Peer", "Ping", .tuple([]), replyType: "()")
      return try nameOwner()
    }
  }

  /// Wraps `org.freedesktop.DBus.GetNameOwner`.
  private func nameOwner() throws(SecretError) -> String {
    try callBus("GetNameOwner", argument: busName, replyType: "(s)").child(0)?.string ?? ""
  }

  /// The user and process behind `uniqueName`, asked once per name: the bus never gives a
  /// unique name to a second connection. Wraps `org.freedesktop.DBus.GetConnectionCredentials`.
  private func credentials(of uniqueName: String) throws(SecretError) -> OwnerCredentials {
    if let known = owners.withLock({ $0[uniqueName] }) { return known }
    let reply = try callBus("GetConnectionCredentials", argument: uniqueName, replyType: "(a{sv})")
    let dictionary = reply.child(0)?.variantDictionary ?? [:]
    let credentials = OwnerCredentials(
      uid: dictionary["UnixUserID"]?.uint32, pid: dictionary["ProcessID"]?.uint32.map { Int32(bitPattern: $0) })
    owners.withLock { $0[uniqueName] = credentials }
    return credentials
  }
}
