// Secrets read and written through a transfer session of our own. libsecret's session spends
// two 1024-bit exponentiations and a start of libgcrypt's random pool on every new connection;
// this one runs the same algorithm with short exponents (DiffieHellman.exponentBits), so a
// one-shot read costs a fraction of that.
//
// The session belongs to the provider that opened it: it is opened only with a provider the bus
// says runs as our own user (ServiceHandle+Trust.swift), and every call that carries a secret
// goes to that provider's unique name. A provider that restarted (and may hand the same session
// path to someone else), or another process that took the name, is an error that makes
// SecretClient reconnect and check again, never a secret sent to or read from another party.
import GLibBridge
import Synchronization
import TransferCrypto

/// The client's end of a transfer session on one connection.
final class ProviderSession: Sendable {
  let path: String
  /// The unique bus name of the provider that opened it.
  let provider: String
  /// The AES key, agreed when first needed or while a round trip leaves time for it
  /// (``ServiceHandle/agreeKey(of:)``): a read sends its `GetSecrets` first and agrees the key
  /// while the answer travels.
  let agreement: Mutex<KeyAgreement>
  /// Whether the bus has said that `provider` runs as our user (``ServiceHandle/vouch(for:)``);
  /// until then the session carries no secret either way.
  let isVouchedFor = Atomic(false)

  enum KeyAgreement {
    case plain
    /// Our key pair and the provider's public key, checked to be a group element.
    case pending(DiffieHellman.KeyPair, BigInteger)
    case agreed(SecretBytes)
    case failed(SecretError)
  }

  init(path: String, provider: String, agreement: consuming sending KeyAgreement) {
    self.path = path
    self.provider = provider
    self.agreement = Mutex(agreement)
  }
}

extension ServiceHandle {
  static let dhAlgorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

  /// The secrets of unlocked items, by path, in one `GetSecrets` call; locked items and items
  /// that have gone are left out.
  func secrets(at paths: [String]) throws(SecretError) -> [String: SecretValue] {
    guard !paths.isEmpty else { return [:] }
    return try inTransferSession { session throws(SecretError) in try secrets(at: paths, in: session) }
  }

  /// Runs `body` with this connection's session (ServiceHandle+Session.swift). A session the
  /// provider no longer knows, or whose secrets do not decrypt, is dropped and `body` runs once
  /// more with a new one.
  func inTransferSession<T>(_ body: (ProviderSession) throws(SecretError) -> T) throws(SecretError) -> T {
    let session = try transferSession()
    do {
      return try body(session)
    } catch .dbus(let name, _) where name.hasSuffix(".NoSession") || name == Self.transferFailed {
      transfer.withLock { if $0 === session { $0 = nil } }
      return try body(try transferSession())
    }
  }

  private func secrets(at paths: [String], in session: ProviderSession) throws(SecretError) -> [String: SecretValue] {
    try secrets(in: callAll([getSecretsCall(paths, in: session)])[0].get(), of: session)
  }

  /// `GetSecrets` of `paths` through `session`, to send alone or in a batch.
  func getSecretsCall(_ paths: [String], in session: ProviderSession) -> BusCall {
    BusCall(
      to: session.provider, Self.servicePath, Self.serviceInterface, "GetSecrets",
      .tuple([.objectPaths(paths), .objectPath(session.path)]), replyType: "(a{o(oayays)})",
      about: paths.count == 1 ? paths[0] : nil)
  }

  /// The secrets, by path, of a `GetSecrets` answer through `session`.
  func secrets(in reply: Variant, of session: ProviderSession) throws(SecretError) -> [String: SecretValue] {
    var secrets: [String: SecretValue] = [:]
    for entry in reply.child(0)?.elements ?? [] {
      guard let path = entry.child(0)?.string, let secret = entry.child(1) else { continue }
      secrets[path] = try open(secret, in: session)
    }
    return secrets
  }

  /// The secret of one unlocked item; nil when it is locked or gone.
  func secret(at path: String) throws(SecretError) -> SecretValue? {
    try secrets(at: [path])[path]
  }

  /// The plain bytes of a `(oayays)` secret.
  private func open(_ secret: Variant, in session: ProviderSession) throws(SecretError) -> SecretValue {
    guard let parameters = secret.child(1), let value = secret.child(2),
      let bytes = value.withBytes({ SecretBytes(copying: $0) })
    else { throw Self.badReply("a secret is (oayays)") }
    let contentType = secret.child(3)?.string ?? "application/octet-stream"
    guard let key = try key(of: session) else { return SecretValue(bytes: bytes, contentType: contentType) }
    // Decrypted in place, in the secret memory the value keeps.
    let decrypted: Result<Int, CryptoError>? = bytes.withUnsafeMutableBytes { data in
      parameters.withBytes { iv in
        key.withUnsafeBytes { keyBytes in
          Result { () throws(CryptoError) in try PaddedCBC.decrypt(data, iv: iv, key: keyBytes) }
        }
      }
    }
    guard let decrypted else { throw Self.badReply("a secret's parameters are bytes") }
    let count = try crypto { () throws(CryptoError) in try decrypted.get() }
    bytes.removeLast(bytes.count - count)
    return SecretValue(bytes: bytes, contentType: contentType)
  }

  /// `value` as a `(oayays)` secret of `session`: encrypted with its key, or as it is in a
  /// plain session. The bytes of a DH session's secret in it are ciphertext only.
  func sealed(_ value: SecretValue, in session: ProviderSession) throws(SecretError) -> DBusValue {
    let parameters: DBusValue
    let bytes: DBusValue
    if let key = try key(of: session) {
      let encrypted = key.withUnsafeBytes { keyBytes in
        value.bytes.withUnsafeBytes { plain in
          Result { () throws(CryptoError) in try PaddedCBC.encrypt(plain, key: keyBytes) }
        }
      }
      let (iv, ciphertext) = try crypto { () throws(CryptoError) in try encrypted.get() }
      (parameters, bytes) = (.bytes(iv), .bytes(ciphertext))
    } else {
      (parameters, bytes) = (.bytes([]), value.bytes.withUnsafeBytes(DBusValue.copyingBytes))
    }
    return .tuple([.objectPath(session.path), parameters, bytes, .string(value.contentType)])
  }

  /// The AES key of `session` (nil for a plain one), agreed now if it is not yet, once the
  /// session is vouched for. A failed agreement fails every use of the session, which then
  /// makes way for a new one.
  func key(of session: ProviderSession) throws(SecretError) -> SecretBytes? {
    try vouch(for: session)
    return try session.agreement.withLock { settled(&$0) }.get()
  }

  /// Agrees the key of `session` if it is not yet, for a caller with time to spare (an answer
  /// on its way); a failure is reported when the key is used.
  func agreeKey(of session: ProviderSession) {
    _ = session.agreement.withLock { settled(&$0) }
  }

  private func settled(_ agreement: inout ProviderSession.KeyAgreement) -> Result<SecretBytes?, SecretError> {
    switch agreement {
    case .plain: return .success(nil)
    case .agreed(let key): return .success(key)
    case .failed(let error): return .failure(error)
    case .pending(let pair, let peer):
      do throws(SecretError) {
        let key = try agreedKey(pair, peer: peer)
        agreement = .agreed(key)
        return .success(key)
      } catch {
        agreement = .failed(error)
        return .failure(error)
      }
    }
  }

  private func agreedKey(_ pair: DiffieHellman.KeyPair, peer: BigInteger) throws(SecretError) -> SecretBytes {
    try crypto { () throws(CryptoError) in
      guard let key = SecretBytes(lockedCount: DiffieHellman.aesKeyLength) else { throw .outOfSecureMemory }
      try key.withUnsafeMutableBytes { (bytes) throws(CryptoError) in
        try DiffieHellman.deriveKey(pair, peer: peer, into: bytes)
      }
      return key
    }
  }

  /// The error name of a transfer that failed on this side (a key agreement or a decryption).
  static let transferFailed = "org.freedesktop.Secret.Error.TransferFailed"

  func crypto<T>(_ body: () throws(CryptoError) -> T) throws(SecretError) -> T {
    do {
      return try body()
    } catch {
      throw .dbus(
        name: Self.transferFailed,
        message: "the transfer session with \(busName) failed (\(error)); the provider may be faulty, try again")
    }
  }

  static func badReply(_ what: String) -> SecretError {
    .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: what)
  }
}
