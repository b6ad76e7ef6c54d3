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
import CLibSecret
import TransferCrypto

/// The client's end of a transfer session on one connection.
final class ProviderSession: Sendable {
  let path: String
  /// The AES key; nil for a `plain` session.
  let key: SecretBytes?
  /// The unique bus name of the provider that opened it.
  let provider: String

  init(path: String, key: SecretBytes?, provider: String) {
    self.path = path
    self.key = key
    self.provider = provider
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

  /// Runs `body` with this connection's session. A session the provider no longer knows, or
  /// whose secrets do not decrypt, is dropped and `body` runs once more with a new one.
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
    var arguments: [OpaquePointer?] = [objectPathArray(paths), g_variant_new_object_path(session.path)]
    let reply = try callObject(
      "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets", g_variant_new_tuple(&arguments, 2),
      replyType: "(a{o(oayays)})", destination: session.provider, about: paths.count == 1 ? paths[0] : nil)
    defer { g_variant_unref(reply) }
    let dictionary = g_variant_get_child_value(reply, 0)
    defer { g_variant_unref(dictionary) }
    var secrets: [String: SecretValue] = [:]
    for index in 0..<g_variant_n_children(dictionary) {
      let entry = g_variant_get_child_value(dictionary, index)
      defer { g_variant_unref(entry) }
      let path = stringValue(of: entry, at: 0)
      let secret = g_variant_get_child_value(entry, 1)
      defer { g_variant_unref(secret) }
      secrets[path] = try open(secret, in: session, from: path)
    }
    return secrets
  }

  /// The secret of one unlocked item; nil when it is locked or gone.
  func secret(at path: String) throws(SecretError) -> SecretValue? {
    try secrets(at: [path])[path]
  }

  /// The session of this connection, opened on first use.
  private func transferSession() throws(SecretError) -> ProviderSession {
    try transfer.withLock { (current: inout ProviderSession?) throws(SecretError) -> ProviderSession in
      if let current { return current }
      let opened = try openSession()
      current = opened
      return opened
    }
  }

  /// Opens a DH session with the provider that owns the name now, once the bus says it runs as
  /// our user; a provider that offers only `plain` is used only when that is allowed.
  private func openSession() throws(SecretError) -> ProviderSession {
    let provider = try trustedProvider()
    let pair = try crypto { () throws(CryptoError) in try DiffieHellman.makeKeyPair() }
    let reply: OpaquePointer
    do {
      reply = try callOpenSession(
        Self.dhAlgorithm, input: pair.publicKey.withUnsafeBytes(byteArray), destination: provider)
    } catch .dbus(let name, _) where name == "org.freedesktop.DBus.Error.NotSupported" {
      guard allowsPlainTransfer else { throw .plainTransferRefused(busName: busName) }
      let plain = try callOpenSession("plain", input: g_variant_new_string(""), destination: provider)
      defer { g_variant_unref(plain) }
      return ProviderSession(path: stringValue(of: plain, at: 1), key: nil, provider: provider)
    }
    defer { g_variant_unref(reply) }
    let boxed = g_variant_get_child_value(reply, 0)
    defer { g_variant_unref(boxed) }
    guard let output = g_variant_get_variant(boxed) else { throw Self.badReply("OpenSession gave no output") }
    defer { g_variant_unref(output) }
    guard "ay".withCString({ g_variant_is_of_type(output, g_variant_type_checked_($0)) }) != 0 else {
      throw Self.badReply("OpenSession gave no DH public key")
    }
    let key = try crypto { () throws(CryptoError) in
      guard let key = SecretBytes(lockedCount: DiffieHellman.aesKeyLength) else { throw .outOfSecureMemory }
      try withBytes(of: output) { (peer) throws(CryptoError) in
        let peer = try DiffieHellman.validPeerKey(peer)
        try key.withUnsafeMutableBytes { (bytes) throws(CryptoError) in
          try DiffieHellman.deriveKey(pair, peer: peer, into: bytes)
        }
      }
      return key
    }
    return ProviderSession(path: stringValue(of: reply, at: 1), key: key, provider: provider)
  }

  private func callOpenSession(_ algorithm: String, input: OpaquePointer, destination: String) throws(SecretError)
    -> OpaquePointer
  {
    var arguments: [OpaquePointer?] = [g_variant_new_string(algorithm), g_variant_new_variant(input)]
    return try callObject(
      "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession", g_variant_new_tuple(&arguments, 2),
      replyType: "(vo)", destination: destination)
  }

  /// The plain bytes of a `(oayays)` secret.
  private func open(_ secret: OpaquePointer?, in session: ProviderSession, from path: String) throws(SecretError)
    -> SecretValue
  {
    let parameters = g_variant_get_child_value(secret, 1)
    let value = g_variant_get_child_value(secret, 2)
    defer { [value, parameters].forEach { g_variant_unref($0) } }
    let contentType = stringValue(of: secret, at: 3)
    let bytes = withBytes(of: value) { SecretBytes(copying: $0) }
    guard let key = session.key else { return SecretValue(bytes: bytes, contentType: contentType) }
    // Decrypted in place, in the secret memory the value keeps.
    let decrypted: Result<Int, CryptoError> = bytes.withUnsafeMutableBytes { data in
      withBytes(of: parameters) { iv in
        key.withUnsafeBytes { keyBytes in
          Result { () throws(CryptoError) in try PaddedCBC.decrypt(data, iv: iv, key: keyBytes) }
        }
      }
    }
    let count = try crypto { () throws(CryptoError) in try decrypted.get() }
    bytes.removeLast(bytes.count - count)
    return SecretValue(bytes: bytes, contentType: contentType)
  }

  /// `value` as a `(oayays)` secret of `session`: encrypted with its key, or as it is in a
  /// plain session. Floating; the bytes of a DH session's secret in it are ciphertext only.
  func sealed(_ value: SecretValue, in session: ProviderSession) throws(SecretError) -> OpaquePointer {
    let parameters: OpaquePointer
    let bytes: OpaquePointer
    if let key = session.key {
      let encrypted = key.withUnsafeBytes { keyBytes in
        value.bytes.withUnsafeBytes { plain in
          Result { () throws(CryptoError) in try PaddedCBC.encrypt(plain, key: keyBytes) }
        }
      }
      let (iv, ciphertext) = try crypto { () throws(CryptoError) in try encrypted.get() }
      (parameters, bytes) = (iv.withUnsafeBytes(byteArray), ciphertext.withUnsafeBytes(byteArray))
    } else {
      (parameters, bytes) = (
        byteArray(UnsafeRawBufferPointer(start: nil, count: 0)), value.bytes.withUnsafeBytes(byteArray)
      )
    }
    var children: [OpaquePointer?] = [
      g_variant_new_object_path(session.path), parameters, bytes, g_variant_new_string(value.contentType),
    ]
    return g_variant_new_tuple(&children, 4)
  }

  /// The error name of a transfer that failed on this side (a key agreement or a decryption).
  static let transferFailed = "org.freedesktop.Secret.Error.TransferFailed"

  private func crypto<T>(_ body: () throws(CryptoError) -> T) throws(SecretError) -> T {
    do {
      return try body()
    } catch {
      throw .dbus(
        name: Self.transferFailed,
        message: "the transfer session with \(busName) failed (\(error)); the provider may be faulty, try again")
    }
  }

  private static func badReply(_ what: String) -> SecretError {
    .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: what)
  }
}

/// Runs `body` with the bytes of an `ay` variant (valid while the variant lives).
private func withBytes<T, E: Error>(of variant: OpaquePointer?, _ body: (UnsafeRawBufferPointer) throws(E) -> T)
  throws(E)
  -> T
{
  var count: gsize = 0
  let base = g_variant_get_fixed_array(variant, &count, 1)
  return try body(UnsafeRawBufferPointer(start: base, count: Int(count)))
}

/// A floating `ay` variant holding a copy of `bytes`.
private func byteArray(_ bytes: UnsafeRawBufferPointer) -> OpaquePointer {
  "y".withCString { g_variant_new_fixed_array(g_variant_type_checked_($0), bytes.baseAddress, gsize(bytes.count), 1) }
}

/// A floating `ao` variant.
private func objectPathArray(_ paths: [String]) -> OpaquePointer {
  let children = paths.map { g_variant_new_object_path($0) }
  return children.withUnsafeBufferPointer { buffer in
    "o".withCString { g_variant_new_array(g_variant_type_checked_($0), buffer.baseAddress, gsize(buffer.count)) }
  }
}
