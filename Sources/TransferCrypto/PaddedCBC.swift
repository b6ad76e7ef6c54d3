// AES-128-CBC with PKCS#7 padding, the cipher of a DH transfer session, with the padded block in
// locked memory.
import SecretMemory

/// AES-128-CBC with PKCS#7 padding, as secrets cross the bus in a DH session.
package enum PaddedCBC {
  package static let ivLength = 16

  /// Encrypts `plain` with `key` and a fresh IV; returns the IV and the ciphertext (neither is
  /// secret). Only the last, padded block is copied, into locked memory.
  package static func encrypt(_ plain: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws(CryptoError) -> (
    iv: [UInt8], ciphertext: [UInt8]
  ) {
    let whole = plain.count / AES128CBC.blockSize * AES128CBC.blockSize
    guard let last = SecretBytes(lockedCount: AES128CBC.blockSize) else { throw .outOfSecureMemory }
    let padding = UInt8(AES128CBC.blockSize - (plain.count - whole))
    last.withUnsafeMutableBytes { block in
      for index in 0..<block.count { block[index] = index < plain.count - whole ? plain[whole + index] : padding }
    }
    let iv = Gcrypt.nonce(count: ivLength)
    var ciphertext = [UInt8](repeating: 0, count: whole + AES128CBC.blockSize)
    try DiffieHellman.library {
      try iv.withUnsafeBytes { ivBytes in
        try last.withUnsafeMutableBytes { lastBlock in
          try ciphertext.withUnsafeMutableBytes { output in
            try AES128CBC.encrypt(
              key: key, iv: ivBytes, input: UnsafeRawBufferPointer(rebasing: plain[0..<whole]), last: lastBlock,
              into: output)
          }
        }
      }
    }
    return (iv, ciphertext)
  }

  /// Decrypts `data` in place with `key` and `iv` and checks its padding; returns the length of
  /// the plain bytes at its start.
  package static func decrypt(
    _ data: UnsafeMutableRawBufferPointer, iv: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
  ) throws(CryptoError) -> Int {
    guard iv.count == ivLength else { throw .invalidIVLength(iv.count) }
    guard data.count > 0, data.count % AES128CBC.blockSize == 0 else {
      throw .invalidCiphertextLength(data.count)
    }
    try DiffieHellman.library { try AES128CBC.run(encrypt: false, key: key, iv: iv, data: data) }
    guard let padding = PKCS7.paddingLength(of: UnsafeRawBufferPointer(data)) else { throw .invalidPadding }
    return data.count - padding
  }
}
