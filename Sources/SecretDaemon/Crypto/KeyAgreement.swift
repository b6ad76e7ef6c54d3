// The server side of the transfer algorithm's key agreement, with the AES key in locked memory.
import SecretMemory
import SystemCalls
import TransferCrypto

extension CryptoError {
  var message: String {
    switch self {
    case .invalidPublicKey(let length):
      "the client's DH public key (\(length) bytes) is not a valid element of the 1024-bit Oakley group"
    case .invalidIVLength(let length): "the secret's IV is \(length) bytes; AES-128-CBC needs 16"
    case .invalidCiphertextLength(let length):
      "the encrypted secret is \(length) bytes; it must be a non-zero multiple of 16"
    case .invalidPadding: "the decrypted secret has invalid PKCS#7 padding (wrong key or corrupted data)"
    case .outOfSecureMemory: Self.exhaustedAdvice
    case .library(let text): text
    }
  }

  /// Why a secret cannot be held.
  private static var exhaustedAdvice: String {
    let limit = ResourceLimits.lockedMemory.map { "\($0) bytes" } ?? "unlimited"
    return "out of locked memory for secrets (\(SecureMemory.lastFailure ?? "no memory"); RLIMIT_MEMLOCK is \(limit)): "
      + "raise LimitMEMLOCK= in the unit, or ulimit -l, or start secretd with --allow-unlocked-memory"
  }
}

/// The outcome of the server side of the key agreement.
struct KeyAgreementResult {
  /// The server's public key, 128 big-endian bytes.
  let serverPublicKey: [UInt8]
  /// The 16-byte AES key, in locked memory.
  let aesKey: SecretBytes
}

enum KeyAgreement {
  /// Key pairs made ahead, so that an OpenSession costs one exponentiation instead of two.
  private static let reserve = KeyPairReserve(refilling: true)

  /// Runs the server side for a client's public key, which is checked before any key is made,
  /// with a key pair made ahead: one exponentiation instead of two.
  static func respond(toClientKey clientKey: UnsafeRawBufferPointer) throws(CryptoError) -> KeyAgreementResult {
    let peer = try DiffieHellman.validPeerKey(clientKey)
    let pair = try reserve.take()
    return KeyAgreementResult(serverPublicKey: pair.publicKey, aesKey: try deriveKey(pair, peer: peer))
  }

  /// The AES key from our pair and the peer's public key, in locked memory.
  static func deriveKey(_ pair: DiffieHellman.KeyPair, peerKey: UnsafeRawBufferPointer) throws(CryptoError)
    -> SecretBytes
  {
    try deriveKey(pair, peer: try DiffieHellman.validPeerKey(peerKey))
  }

  private static func deriveKey(_ pair: DiffieHellman.KeyPair, peer: BigInteger) throws(CryptoError) -> SecretBytes {
    guard let key = SecretBytes(lockedCount: DiffieHellman.aesKeyLength) else { throw .outOfSecureMemory }
    try key.withUnsafeMutableBytes { (bytes) throws(CryptoError) in
      try DiffieHellman.deriveKey(pair, peer: peer, into: bytes)
    }
    return key
  }
}
