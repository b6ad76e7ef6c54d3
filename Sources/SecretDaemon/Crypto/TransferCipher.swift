// AES-128-CBC with PKCS#7 padding for secrets crossing the bus in a DH session.
import TransferCrypto

enum TransferCipher {
  /// Decrypts `ciphertext` with `key` and `iv` into locked memory, checking the padding.
  static func decrypt(
    _ ciphertext: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, key: SecureBuffer
  ) throws(CryptoError) -> SecureBuffer {
    guard let plain = SecureBuffer(copying: ciphertext) else { throw .outOfSecureMemory }
    let plainCount = try key.withUnsafeBytes { (keyBytes) throws(CryptoError) in
      try plain.withUnsafeMutableBytes { (data) throws(CryptoError) in
        try PaddedCBC.decrypt(data, iv: iv, key: keyBytes)
      }
    }
    plain.truncate(to: plainCount)
    return plain
  }

  /// Encrypts `secret` with a fresh IV; returns the IV and the ciphertext (not secret).
  static func encrypt(_ secret: SecureBuffer, key: SecureBuffer) throws(CryptoError) -> (
    iv: [UInt8], ciphertext: [UInt8]
  ) {
    let padding = AES128CBC.blockSize - secret.count % AES128CBC.blockSize
    guard let buffer = SecureBuffer(count: secret.count + padding) else { throw .outOfSecureMemory }
    buffer.withUnsafeMutableBytes { destination in
      secret.withUnsafeBytes { source in
        if let from = source.baseAddress, let to = destination.baseAddress, source.count > 0 {
          to.copyMemory(from: from, byteCount: source.count)
        }
      }
      for index in secret.count..<destination.count { destination[index] = UInt8(padding) }
    }
    let iv = Gcrypt.nonce(count: PaddedCBC.ivLength)
    do {
      try key.withUnsafeBytes { keyBytes in
        try iv.withUnsafeBytes { ivBytes in
          try buffer.withUnsafeMutableBytes { data in
            try AES128CBC.run(encrypt: true, key: keyBytes, iv: ivBytes, data: data)
          }
        }
      }
    } catch {
      throw .library(String(describing: error))
    }
    // The buffer now holds ciphertext only; copying it out exposes nothing.
    let ciphertext = buffer.withUnsafeBytes { Array($0) }
    return (iv, ciphertext)
  }
}
