// Who the provider is, asked of the bus before a secret crosses it: the owner of the provider's
// name must run as this process's own user. Otherwise a process of another user that takes the
// name first (before activation, or in the moment after a crash) would receive every secret
// written and answer every read.
import GLibBridge

/// What the bus says about the connection behind a unique name, and the program it runs (read
/// from /proc only when it is asked for: a read never needs it).
struct OwnerCredentials: Sendable, Hashable {
  var uid: UInt32?
  var pid: Int32?
  var executable: String?
}

extension ServiceHandle {
  /// The unique name that owns the provider's name now, once the bus has said that it runs as
  /// this process's user; a provider that is not running yet is started first (activation).
  /// Secrets then go to that unique name only, never to whoever owns the name later.
  func trustedProvider() throws(SecretError) -> String {
    let owner = try currentOwner()
    try trust(owner, credentials(of: owner))
    return owner
  }

  /// Refuses `owner` unless `credentials` say it runs as this process's user.
  func trust(_ owner: String, _ credentials: OwnerCredentials) throws(SecretError) {
    guard credentials.uid == ProviderInfo.currentUser else {
      throw .providerOfAnotherUser(describe(owner: owner, credentials))
    }
  }

  /// Whether the provider writes go to (the one the transfer session belongs to, trusted
  /// when it was opened) is secretd, whose `CreateItem` with replace replaces only
  /// an item the address names (every version: gnome-keyring's replaces any item whose
  /// attributes include the ones sent). Told by the program the bus says owns the name.
  func providerIsSecretd() throws(SecretError) -> Bool {
    let provider = try transferSession().provider
    return describe(owner: provider, try credentials(of: provider)).isSecretd
  }

  /// Which connection and process own the provider's name, and as which user.
  func providerInfo() throws(SecretError) -> ProviderInfo {
    let owner = try nameOwner()
    return describe(owner: owner, try credentials(of: owner))
  }

  private func describe(owner: String, _ credentials: OwnerCredentials) -> ProviderInfo {
    var executable = credentials.executable
    if executable == nil, let pid = credentials.pid, let program = Self.executable(of: pid) {
      executable = program
      owners.withLock { $0[owner]?.executable = program }
    }
    return ProviderInfo(
      busName: busName, uniqueName: owner, pid: credentials.pid, executable: executable, uid: credentials.uid)
  }

  /// The owner of the provider's name, asked of the bus, starting the provider when the bus
  /// can (a `Peer.Ping` sent to the name activates it) and nobody owns it yet. Secrets go to
  /// that unique name only, and a name whose owner has gone answers nothing, which makes the
  /// client reconnect.
  func currentOwner() throws(SecretError) -> String {
    do {
      return try nameOwner()
    } catch .serviceUnavailable {
      // Any answer, even an error (secretd serves no Peer interface), means it was started.
      _ = try? callObject("/", "org.freedesktop.DBus.Peer", "Ping", .tuple([]), replyType: "()")
      return try nameOwner()
    }
  }

  /// Makes sure the bus has said that the provider of `session` runs as this process's user,
  /// asking it now if it has not, before the session carries a secret either way. The session
  /// of another user's provider is dropped: the next call opens one with whoever owns the name
  /// then.
  func vouch(for session: ProviderSession) throws(SecretError) {
    guard !session.isVouchedFor.load(ordering: .acquiring) else { return }
    do {
      try trust(session.provider, credentials(of: session.provider))
    } catch {
      transfer.withLock { if $0 === session { $0 = nil } }
      throw error
    }
    session.isVouchedFor.store(true, ordering: .releasing)
  }

  /// Vouches for this connection's session, if one was opened: nothing a provider answered
  /// reaches the caller before the bus has said who it is.
  func vouchForSession() throws(SecretError) {
    guard let session = transfer.withLock({ $0 }) else { return }
    try vouch(for: session)
  }

  /// `GetConnectionCredentials` of the provider of `session`, to send in the batch before its
  /// first secret; nil when it is vouched for or the bus has said already.
  func vouchingCall(for session: ProviderSession) -> BusCall? {
    guard !session.isVouchedFor.load(ordering: .acquiring), owners.withLock({ $0[session.provider] }) == nil
    else { return nil }
    return credentialsCall(of: session.provider)
  }

  /// Wraps `org.freedesktop.DBus.GetNameOwner`.
  private func nameOwner() throws(SecretError) -> String {
    try owner(in: callAll([nameOwnerCall()])[0])
  }

  private func nameOwnerCall() -> BusCall {
    BusCall(
      to: "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
      .tuple([.string(busName)]), replyType: "(s)", about: busName)
  }

  private func owner(in answer: Result<Variant, SecretError>) throws(SecretError) -> String {
    try answer.get().child(0)?.string ?? ""
  }

  /// The user and process behind `uniqueName`, asked once per name: the bus never gives a
  /// unique name to a second connection. Wraps `org.freedesktop.DBus.GetConnectionCredentials`.
  private func credentials(of uniqueName: String) throws(SecretError) -> OwnerCredentials {
    if let known = owners.withLock({ $0[uniqueName] }) { return known }
    return try credentials(of: uniqueName, from: callAll([credentialsCall(of: uniqueName)])[0])
  }

  /// `GetConnectionCredentials` of `uniqueName`, to send alone or in a batch.
  func credentialsCall(of uniqueName: String) -> BusCall {
    BusCall(
      to: "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials",
      .tuple([.string(uniqueName)]), replyType: "(a{sv})", about: busName)
  }

  /// What the bus answered about `uniqueName`, kept: the bus never gives a unique name to a
  /// second connection.
  func credentials(of uniqueName: String, from answer: Result<Variant, SecretError>) throws(SecretError)
    -> OwnerCredentials
  {
    let dictionary = try answer.get().child(0)?.variantDictionary ?? [:]
    let pid = dictionary["ProcessID"]?.uint32.map { Int32(bitPattern: $0) }
    let credentials = OwnerCredentials(
      uid: dictionary["UnixUserID"]?.uint32, pid: pid)
    owners.withLock { $0[uniqueName] = credentials }
    return credentials
  }
}
