// The transfer session of a connection, opened on first use with the provider's owner, in one
// round trip with the bus's word on who that owner runs as (ServiceHandle+Trust.swift) and with
// the calls the first operation makes anyway. `OpenSession` carries only a public key: no secret
// is sent or read before the owner is known to run as this user.
import GLibBridge
import TransferCrypto

extension ServiceHandle {
  /// Sends `calls` to the provider that this connection's transfer session belongs to; with no
  /// session yet, opens one in the same round trip. The calls' destinations are replaced.
  func callProvider(_ calls: [BusCall]) throws(SecretError) -> [Result<Variant, SecretError>] {
    var answered: [Result<Variant, SecretError>]?
    let session = try transfer.withLock { (current: inout ProviderSession?) throws(SecretError) -> ProviderSession in
      if let current { return current }
      let (opened, answers) = try openSession(alongside: calls)
      current = opened
      answered = answers
      return opened
    }
    return answered ?? callAll(calls.map { $0.sent(to: session.provider) })
  }

  /// The session of this connection, opened on first use.
  func transferSession() throws(SecretError) -> ProviderSession {
    try transfer.withLock { (current: inout ProviderSession?) throws(SecretError) -> ProviderSession in
      if let current { return current }
      let opened = try openSession(alongside: []).session
      current = opened
      return opened
    }
  }

  /// Opens a DH session with the provider that owns the name now, with `calls` in the same
  /// round trip, once the bus says it runs as our user; a provider that offers only `plain`
  /// is used only when that is allowed. Returns the answers to `calls`.
  private func openSession(alongside calls: [BusCall]) throws(SecretError)
    -> (session: ProviderSession, answers: [Result<Variant, SecretError>])
  {
    // The key pair is made while the bus says who owns the name.
    let (provider, pair) = try currentOwner { () throws(SecretError) in
      try crypto { () throws(CryptoError) in try DiffieHellman.makeKeyPair() }
    }
    let known = owners.withLock { $0[provider] }
    var batch = [openSessionCall(Self.dhAlgorithm, input: .bytes(pair.publicKey), to: provider)]
    if known == nil { batch.append(credentialsCall(of: provider)) }
    var answers = callAll(batch + calls.map { $0.sent(to: provider) })
    let opened = answers.removeFirst()
    var credentials = known
    if credentials == nil { credentials = try self.credentials(of: provider, from: answers.removeFirst()) }
    try trust(provider, credentials ?? OwnerCredentials())
    return (try session(from: opened, pair: pair, provider: provider), answers)
  }

  /// The session an `OpenSession` of DH answered; when the provider does not support DH, a
  /// plain one if that is allowed.
  private func session(
    from answer: Result<Variant, SecretError>, pair: sending DiffieHellman.KeyPair, provider: String
  ) throws(SecretError) -> ProviderSession {
    let reply: Variant
    do {
      reply = try answer.get()
    } catch .dbus(let name, _) where name == "org.freedesktop.DBus.Error.NotSupported" {
      guard allowsPlainTransfer else { throw .plainTransferRefused(busName: busName) }
      let plain = try callAll([openSessionCall("plain", input: .string(""), to: provider)])[0].get()
      return ProviderSession(path: plain.child(1)?.string ?? "/", provider: provider, agreement: .plain)
    }
    guard let output = reply.child(0)?.unboxed else { throw Self.badReply("OpenSession gave no output") }
    guard let peerKey = output.publicBytes else { throw Self.badReply("OpenSession gave no DH public key") }
    // Checked now; the key itself is agreed when first needed (ServiceHandle+Transfer.swift).
    let checked = peerKey.withUnsafeBytes { bytes in
      Result { () throws(CryptoError) in try DiffieHellman.validPeerKey(bytes) }
    }
    let peer = try crypto { () throws(CryptoError) in try checked.get() }
    return ProviderSession(
      path: reply.child(1)?.string ?? "/", provider: provider, agreement: .pending(pair, peer))
  }

  private func openSessionCall(_ algorithm: String, input: DBusValue, to provider: String) -> BusCall {
    BusCall(
      to: provider, Self.servicePath, Self.serviceInterface, "OpenSession",
      .tuple([.string(algorithm), .variant(input)]), replyType: "(vo)")
  }
}

extension BusCall {
  /// The same call, to `destination`.
  func sent(to destination: String) -> BusCall {
    var call = self
    call.destination = destination
    return call
  }
}
