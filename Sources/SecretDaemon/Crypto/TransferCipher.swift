// AES-128-CBC with PKCS#7 padding for secrets crossing the bus in a DH session.
import SecretMemory
import TransferCrypto

enum TransferCipher {
  /// Decrypts `ciphertext` with `key` and `iv` into `destination` (at least as long as the
  /// ciphertext: the store's record in the arena), checking the padding; returns the plain count.
  static func decrypt(
    _ ciphertext: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, key: SecretBytes,
    into destination: UnsafeMutableRawBufferPointer
  ) throws(CryptoError) -> Int {
    let data = UnsafeMutableRawBufferPointer(rebasing: destination[0..<ciphertext.count])
    data.copyMemory(from: ciphertext)
    return try key.withUnsafeBytes { (keyBytes) throws(CryptoError) in
      try PaddedCBC.decrypt(data, iv: iv, key: keyBytes)
    }
  }

  /// Encrypts `secret` with a fresh IV; returns the IV and the ciphertext (not secret).
  static func encrypt(_ secret: UnsafeRawBufferPointer, key: SecretBytes) throws(CryptoError) -> (
    iv: [UInt8], ciphertext: [UInt8]
  ) {
    try key.withUnsafeBytes { (keyBytes) throws(CryptoError) in try PaddedCBC.encrypt(secret, key: keyBytes) }
  }
}
