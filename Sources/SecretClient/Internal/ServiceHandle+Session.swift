// The transfer session of a connection, opened on first use in one round trip with the calls
// the first operation makes anyway: `OpenSession` goes to the provider's well-known name, and
// its reply says which unique name answered. That name is the provider from then on. It is
// asked about (ServiceHandle+Trust.swift) in the next round trip, before the session carries a
// secret either way: `OpenSession` carries only a public key, made while the connection was set up.
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
  /// round trip; a provider that offers only `plain` is used only when that is allowed. The
  /// session is trusted once the bus says its provider runs as our user (at once, when the bus
  /// said so of that name before). Returns the answers to `calls`, all from that provider.
  private func openSession(alongside calls: [BusCall]) throws(SecretError)
    -> (session: ProviderSession, answers: [Result<Variant, SecretError>])
  {
    let pair = try crypto { () throws(CryptoError) in try preparedKeyPair.take() }
    let opening = openSessionCall(Self.dhAlgorithm, input: .bytes(pair.publicKey), to: busName)
    var (answers, senders, _) = callTogether([opening] + calls.map { $0.sent(to: busName) }) {}
    let opened = answers.removeFirst()
    let session = try session(from: opened, pair: pair, sender: senders.removeFirst())
    // The name changed hands within the batch: what another owner answered is asked again.
    let elsewhere = zip(calls.indices, senders).filter { $0.1 != session.provider }.map(\.0)
    for (index, answer) in zip(elsewhere, callAll(elsewhere.map { calls[$0].sent(to: session.provider) })) {
      answers[index] = answer
    }
    if let known = owners.withLock({ $0[session.provider] }) {
      try trust(session.provider, known)
      session.isVouchedFor.store(true, ordering: .releasing)
    }
    return (session, answers)
  }

  /// The session an `OpenSession` of DH answered, with the provider that sent the answer; when
  /// the provider does not support DH, a plain one if that is allowed.
  private func session(
    from answer: Result<Variant, SecretError>, pair: sending DiffieHellman.KeyPair, sender: String?
  ) throws(SecretError) -> ProviderSession {
    let reply: Variant
    do {
      reply = try answer.get()
    } catch .dbus(let name, _) where name == "org.freedesktop.DBus.Error.NotSupported" {
      guard allowsPlainTransfer else { throw .plainTransferRefused(busName: busName) }
      guard let provider = sender else { throw Self.badReply("OpenSession was refused by no one") }
      let plain = try callAll([openSessionCall("plain", input: .string(""), to: provider)])[0].get()
      return ProviderSession(path: plain.child(1)?.string ?? "/", provider: provider, agreement: .plain)
    }
    guard let provider = sender else { throw Self.badReply("OpenSession was answered by no one") }
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
