// Transfer sessions: how secrets cross the bus for one client connection.

/// Why a session could not be opened or used.
enum SessionError: Error, Equatable {
  case unsupportedAlgorithm(String)
  case invalidInput(String)
  case noSession(String)
  case tooManySessions(Int)
  case crypto(CryptoError)
}

/// A secret as it travels: session, parameters (the IV), value, content type.
struct WireSecret {
  let sessionPath: String
  let parameters: [UInt8]
  let value: DBusValue
  let contentType: String
}

/// One negotiated session, owned by the connection that opened it.
final class TransferSession {
  enum Algorithm: String {
    case plain
    case dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
  }

  let number: Int
  let owner: String
  let algorithm: Algorithm
  /// The AES key in locked memory; nil for `plain` and once closed.
  private(set) var key: SecureBuffer?

  init(number: Int, owner: String, algorithm: Algorithm, key: SecureBuffer?) {
    self.number = number
    self.owner = owner
    self.algorithm = algorithm
    self.key = key
  }

  /// Drops (and so wipes) the key.
  func close() { key = nil }

  /// Turns what the client sent into plain bytes in locked memory.
  func decode(parameters: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(CryptoError) -> SecureBuffer {
    switch algorithm {
    case .plain:
      // The clear bytes also sit in GDBus's received message buffer, which GLib frees without
      // wiping; the client chose `plain`. Our own copy is locked and wiped.
      guard let copy = SecureBuffer(copying: value) else { throw .outOfSecureMemory }
      return copy
    case .dh:
      guard let key else { throw .library("session is closed") }
      return try TransferCipher.decrypt(value, iv: parameters, key: key)
    }
  }

  /// Prepares a stored secret for the client.
  func encode(_ secret: SecureBuffer, contentType: String, path: String) throws(CryptoError) -> WireSecret {
    switch algorithm {
    case .plain:
      return WireSecret(sessionPath: path, parameters: [], value: .secureBytes(secret), contentType: contentType)
    case .dh:
      guard let key else { throw .library("session is closed") }
      let sealed = try TransferCipher.encrypt(secret, key: key)
      return WireSecret(sessionPath: path, parameters: sealed.iv, value: .bytes(sealed.ciphertext), contentType: contentType)
    }
  }
}

/// Every open session, indexed by number and by owning connection.
final class SessionRegistry {
  private(set) var sessions: [Int: TransferSession] = [:]
  private var byOwner: [String: Set<Int>] = [:]
  private var nextNumber = 1
  let maxPerClient: Int

  init(maxPerClient: Int) { self.maxPerClient = maxPerClient }

  var count: Int { sessions.count }

  /// Opens a session for `owner`; returns it and the output for the client
  /// (the server's public key for DH, nothing for plain).
  func open(algorithm name: String, input: Variant, owner: String) throws(SessionError) -> (TransferSession, DBusValue) {
    guard let algorithm = TransferSession.Algorithm(rawValue: name) else { throw .unsupportedAlgorithm(name) }
    if (byOwner[owner]?.count ?? 0) >= maxPerClient { throw .tooManySessions(maxPerClient) }
    let key: SecureBuffer?
    let output: DBusValue
    switch algorithm {
    case .plain:
      key = nil
      output = .string("")
    case .dh:
      guard let result = input.withBytes({ bytes -> Result<KeyAgreementResult, CryptoError> in
        do throws(CryptoError) { return .success(try KeyAgreement.respond(toClientKey: bytes)) } catch { return .failure(error) }
      }) else {
        throw .invalidInput("the DH input must be a byte array (ay) holding the client's public key, not \(input.typeString)")
      }
      switch result {
      case .success(let agreement):
        key = agreement.aesKey
        output = .bytes(agreement.serverPublicKey)
      case .failure(let error):
        throw .crypto(error)
      }
    }
    let session = TransferSession(number: nextNumber, owner: owner, algorithm: algorithm, key: key)
    nextNumber += 1
    sessions[session.number] = session
    byOwner[owner, default: []].insert(session.number)
    return (session, output)
  }

  /// The session at `path` if `caller` owns it.
  func session(at path: String, caller: String) throws(SessionError) -> TransferSession {
    guard case .session(let number)? = ObjectNode(path: path), let session = sessions[number], session.owner == caller
    else { throw .noSession(path) }
    return session
  }

  func close(_ number: Int) {
    guard let session = sessions.removeValue(forKey: number) else { return }
    session.close()
    byOwner[session.owner]?.remove(number)
    if byOwner[session.owner]?.isEmpty == true { byOwner[session.owner] = nil }
  }

  /// Closes every session of a client that left the bus.
  func closeAll(ownedBy owner: String) {
    guard let numbers = byOwner.removeValue(forKey: owner) else { return }
    for number in numbers { sessions.removeValue(forKey: number)?.close() }
  }
}
