// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` transfer algorithm of the Secret Service, for both
// ends of a session: Diffie-Hellman over RFC 2409's second Oakley group, HKDF-SHA256 and PKCS#7.
import CGcrypt
import SecretMemory

/// Why a transfer session or a secret could not be processed.
package enum CryptoError: Error, Equatable, Sendable {
  /// The peer's public key is empty, too long, or outside 2 ... p-2.
  case invalidPublicKey(length: Int)
  case invalidIVLength(Int)
  /// Ciphertext must be a non-zero multiple of 16 bytes.
  case invalidCiphertextLength(Int)
  case invalidPadding
  case outOfSecureMemory
  case library(String)
}

/// The Oakley group 2 (RFC 2409 section 6.2): a 1024-bit safe prime with generator 2.
package enum OakleyGroup2 {
  static let primeHex =
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"
    + "29024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"
    + "E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381"
    + "FFFFFFFFFFFFFFFF"
  package static let byteCount = 128
  static let generator: UInt = 2
}

package enum DiffieHellman {
  /// The length of a private exponent. In a safe-prime group a short exponent resists every
  /// known attack as well as a full one once it has twice the bits of the security wanted
  /// (RFC 3526 section 8); 256 bits give 128, above the ~80 of the 1024-bit group itself, and
  /// make each exponentiation about four times cheaper than with a 1024-bit exponent.
  package static let exponentBits = 256
  package static let aesKeyLength = 16

  /// One side's key pair: a fresh private exponent (libgcrypt's locked memory) and its public key.
  package struct KeyPair {
    let privateKey: BigInteger
    /// 128 big-endian bytes.
    package let publicKey: [UInt8]
  }

  package static func makeKeyPair() throws(CryptoError) -> KeyPair {
    try library {
      let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
      guard let generator = BigInteger.small(OakleyGroup2.generator),
        let privateKey = BigInteger.randomSecret(bits: exponentBits),
        let publicKey = generator.power(privateKey, modulo: prime)
      else { throw CryptoError.outOfSecureMemory }
      var bytes = [UInt8](repeating: 0, count: OakleyGroup2.byteCount)
      try bytes.withUnsafeMutableBytes { try publicKey.write(paddedTo: OakleyGroup2.byteCount, into: $0) }
      return KeyPair(privateKey: privateKey, publicKey: bytes)
    }
  }

  /// The peer's public key (unsigned big-endian) as a number, when it is an element of the
  /// group other than 1 and p-1 (0, 1, p-1 and anything >= p would leak the key or are not
  /// group elements). One leading zero byte (a signed encoding of a key whose top bit is set)
  /// is allowed, so a key is at most 129 bytes. Cheap: a caller checks it before any
  /// exponentiation.
  package static func validPeerKey(_ given: UnsafeRawBufferPointer) throws(CryptoError) -> BigInteger {
    let zeros = given.prefix { $0 == 0 }.count
    let peerKey = UnsafeRawBufferPointer(rebasing: given[zeros...])
    guard given.count <= OakleyGroup2.byteCount + 1, peerKey.count > 0, peerKey.count <= OakleyGroup2.byteCount
    else { throw .invalidPublicKey(length: given.count) }
    return try library {
      let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
      guard let one = BigInteger.small(1), let primeMinusOne = prime.minus(1) else {
        throw CryptoError.outOfSecureMemory
      }
      let peer = try BigInteger.fromUnsignedBytes(peerKey)
      guard peer.compare(one) > 0, peer.compare(primeMinusOne) < 0 else {
        throw CryptoError.invalidPublicKey(length: given.count)
      }
      return peer
    }
  }

  /// Writes the 16-byte AES key agreed from our pair and the peer's public key into `key`: the
  /// shared secret left-padded to 128 bytes, then HKDF-SHA256.
  package static func deriveKey(
    _ pair: KeyPair, peer: BigInteger, into key: UnsafeMutableRawBufferPointer
  ) throws(CryptoError) {
    try library {
      let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
      guard let shared = peer.power(pair.privateKey, modulo: prime) else { throw CryptoError.outOfSecureMemory }
      try withLockedScratch(OakleyGroup2.byteCount) { sharedBytes throws(CryptoError) in
        try library {
          try shared.write(paddedTo: OakleyGroup2.byteCount, into: sharedBytes)
          try hkdfSHA256(inputKeyMaterial: UnsafeRawBufferPointer(sharedBytes), into: key)
        }
      }
    }
  }

  /// HKDF-SHA256 (RFC 5869) with an empty salt (HashLen zero bytes) and empty info, filling
  /// `output` (at most 32 bytes).
  package static func hkdfSHA256(
    inputKeyMaterial: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws(CryptoError) {
    guard output.count <= HMACSHA256.length else { throw .library("HKDF asked for \(output.count) bytes") }
    let salt = [UInt8](repeating: 0, count: HMACSHA256.length)
    try withLockedScratch(2 * HMACSHA256.length) { scratch throws(CryptoError) in
      let pseudoRandomKey = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<HMACSHA256.length])
      let block = UnsafeMutableRawBufferPointer(rebasing: scratch[HMACSHA256.length...])
      try library {
        try salt.withUnsafeBytes {
          try HMACSHA256.authenticate(key: $0, message: inputKeyMaterial, into: pseudoRandomKey)
        }
        // T(1) = HMAC(PRK, info || 0x01); one block covers 16 bytes.
        let counter: [UInt8] = [1]
        try counter.withUnsafeBytes {
          try HMACSHA256.authenticate(key: UnsafeRawBufferPointer(pseudoRandomKey), message: $0, into: block)
        }
      }
      output.copyMemory(from: UnsafeRawBufferPointer(rebasing: block[0..<output.count]))
    }
  }

  /// Runs `body` with `count` bytes of locked memory, wiped and freed after.
  static func withLockedScratch<R>(
    _ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> R
  ) throws(CryptoError) -> R {
    guard let scratch = SecretBytes(lockedCount: count) else { throw .outOfSecureMemory }
    return try scratch.withUnsafeMutableBytes(body)
  }

  /// Runs libgcrypt calls, reporting their failures as ``CryptoError/library(_:)``.
  static func library<R>(_ body: () throws(any Error) -> R) throws(CryptoError) -> R {
    do {
      return try body()
    } catch let error as CryptoError {
      throw error
    } catch {
      throw .library(String(describing: error))
    }
  }
}

/// PKCS#7 padding, as the transfer algorithm pads secrets to whole AES blocks.
package enum PKCS7 {
  /// The number of padding bytes at the end of `bytes`, checked in full without branching on
  /// secret data byte by byte; nil when the padding is invalid.
  package static func paddingLength(of bytes: UnsafeRawBufferPointer) -> Int? {
    guard let lastByte = bytes.last else { return nil }
    let last = Int(lastByte)
    guard last >= 1, last <= AES128CBC.blockSize, last <= bytes.count else { return nil }
    var difference: UInt8 = 0
    for index in (bytes.count - last)..<bytes.count { difference |= bytes[index] ^ UInt8(last) }
    return difference == 0 ? last : nil
  }
}
