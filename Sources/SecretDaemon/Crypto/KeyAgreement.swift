// Diffie-Hellman over RFC 2409's second Oakley group and HKDF-SHA256, as the
// `dh-ietf1024-sha256-aes128-cbc-pkcs7` transfer algorithm defines them.

/// Why a transfer session or a secret could not be processed.
enum CryptoError: Error, Equatable {
  /// The client's public key is empty, too long, or outside 2 ... p-2.
  case invalidPublicKey(length: Int)
  case invalidIVLength(Int)
  /// Ciphertext must be a non-zero multiple of 16 bytes.
  case invalidCiphertextLength(Int)
  case invalidPadding
  case outOfSecureMemory
  case library(String)

  var message: String {
    switch self {
    case .invalidPublicKey(let length):
      "the client's DH public key (\(length) bytes) is not a valid element of the 1024-bit Oakley group"
    case .invalidIVLength(let length): "the secret's IV is \(length) bytes; AES-128-CBC needs 16"
    case .invalidCiphertextLength(let length):
      "the encrypted secret is \(length) bytes; it must be a non-zero multiple of 16"
    case .invalidPadding: "the decrypted secret has invalid PKCS#7 padding (wrong key or corrupted data)"
    case .outOfSecureMemory: SecureMemory.exhaustedAdvice
    case .library(let text): text
    }
  }
}

/// The Oakley group 2 (RFC 2409 section 6.2): a 1024-bit safe prime with generator 2.
enum OakleyGroup2 {
  static let primeHex =
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"
    + "29024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"
    + "E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381"
    + "FFFFFFFFFFFFFFFF"
  static let byteCount = 128
  static let generator: UInt = 2
}

/// The outcome of the server side of the key agreement.
struct KeyAgreementResult {
  /// The server's public key, 128 big-endian bytes.
  let serverPublicKey: [UInt8]
  /// The 16-byte AES key, in locked memory.
  let aesKey: SecureBuffer
}

enum KeyAgreement {
  static let aesKeyLength = 16

  /// One side's key pair: a fresh private exponent (locked memory) and its public key.
  struct KeyPair {
    let privateKey: BigInteger
    /// 128 big-endian bytes.
    let publicKey: [UInt8]
  }

  static func makeKeyPair() throws(CryptoError) -> KeyPair {
    do {
      let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
      guard let generator = BigInteger.small(OakleyGroup2.generator),
        let privateKey = BigInteger.randomSecret(bits: 1024),
        let publicKey = generator.power(privateKey, modulo: prime)
      else { throw CryptoError.outOfSecureMemory }
      var bytes = [UInt8](repeating: 0, count: OakleyGroup2.byteCount)
      try bytes.withUnsafeMutableBytes { try publicKey.write(paddedTo: OakleyGroup2.byteCount, into: $0) }
      return KeyPair(privateKey: privateKey, publicKey: bytes)
    } catch let error as CryptoError {
      throw error
    } catch {
      throw .library(String(describing: error))
    }
  }

  /// The AES key from our private key and the peer's public key (unsigned big-endian, any
  /// length): shared secret left-padded to 128 bytes, then HKDF-SHA256 to 16 bytes.
  static func deriveKey(_ pair: KeyPair, peerKey: UnsafeRawBufferPointer) throws(CryptoError) -> SecureBuffer {
    try deriveKey(pair, peer: try validPeerKey(peerKey))
  }

  /// The peer's public key as a number, if it is an element of the group other than 1 and p-1
  /// (0, 1, p-1 and anything >= p would leak the key or are not group elements).
  static func validPeerKey(_ peerKey: UnsafeRawBufferPointer) throws(CryptoError) -> BigInteger {
    guard peerKey.count > 0, peerKey.count <= OakleyGroup2.byteCount else {
      throw .invalidPublicKey(length: peerKey.count)
    }
    do {
      let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
      guard let one = BigInteger.small(1), let primeMinusOne = prime.minus(1) else {
        throw CryptoError.outOfSecureMemory
      }
      let peer = try BigInteger.fromUnsignedBytes(peerKey)
      guard peer.compare(one) > 0, peer.compare(primeMinusOne) < 0 else {
        throw CryptoError.invalidPublicKey(length: peerKey.count)
      }
      return peer
    } catch let error as CryptoError {
      throw error
    } catch {
      throw .library(String(describing: error))
    }
  }

  private static func deriveKey(_ pair: KeyPair, peer: BigInteger) throws(CryptoError) -> SecureBuffer {
    do {
      let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
      guard let shared = peer.power(pair.privateKey, modulo: prime),
        let sharedBytes = SecureBuffer(count: OakleyGroup2.byteCount)
      else { throw CryptoError.outOfSecureMemory }
      try sharedBytes.withUnsafeMutableBytes { try shared.write(paddedTo: OakleyGroup2.byteCount, into: $0) }
      return try hkdfSHA256(inputKeyMaterial: sharedBytes, length: aesKeyLength)
    } catch let error as CryptoError {
      throw error
    } catch {
      throw .library(String(describing: error))
    }
  }

  /// Runs the server side for a client's public key, which is checked before any key is made.
  static func respond(toClientKey clientKey: UnsafeRawBufferPointer) throws(CryptoError) -> KeyAgreementResult {
    let peer = try validPeerKey(clientKey)
    let pair = try makeKeyPair()
    let key = try deriveKey(pair, peer: peer)
    return KeyAgreementResult(serverPublicKey: pair.publicKey, aesKey: key)
  }

  /// HKDF-SHA256 (RFC 5869) with an empty salt (HashLen zero bytes) and empty info.
  static func hkdfSHA256(inputKeyMaterial: SecureBuffer, length: Int) throws(CryptoError) -> SecureBuffer {
    guard length <= HMACSHA256.length,
      let pseudoRandomKey = SecureBuffer(count: HMACSHA256.length),
      let block = SecureBuffer(count: HMACSHA256.length),
      let output = SecureBuffer(count: length)
    else { throw .outOfSecureMemory }
    let salt = [UInt8](repeating: 0, count: HMACSHA256.length)
    do {
      try salt.withUnsafeBytes { saltBytes in
        try inputKeyMaterial.withUnsafeBytes { ikm in
          try pseudoRandomKey.withUnsafeMutableBytes { prk in
            try HMACSHA256.authenticate(key: saltBytes, message: ikm, into: prk)
          }
        }
      }
      // T(1) = HMAC(PRK, info || 0x01); one block covers 16 bytes.
      let counter: [UInt8] = [1]
      try counter.withUnsafeBytes { message in
        try pseudoRandomKey.withUnsafeBytes { prk in
          try block.withUnsafeMutableBytes { out in
            try HMACSHA256.authenticate(key: prk, message: message, into: out)
          }
        }
      }
    } catch {
      throw .library(String(describing: error))
    }
    block.withUnsafeBytes { source in
      output.withUnsafeMutableBytes { destination in
        destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<length]))
      }
    }
    return output
  }
}
