// AES-128-CBC with PKCS#7 padding for secrets crossing the bus in a DH session.

enum TransferCipher {
  static let ivLength = 16

  /// Decrypts `ciphertext` with `key` and `iv` into locked memory, checking the padding.
  static func decrypt(
    _ ciphertext: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, key: SecureBuffer
  ) throws(CryptoError) -> SecureBuffer {
    guard iv.count == ivLength else { throw .invalidIVLength(iv.count) }
    guard ciphertext.count > 0, ciphertext.count % AES128CBC.blockSize == 0 else {
      throw .invalidCiphertextLength(ciphertext.count)
    }
    guard let plain = SecureBuffer(copying: ciphertext) else { throw .outOfSecureMemory }
    do {
      try key.withUnsafeBytes { keyBytes in
        try plain.withUnsafeMutableBytes { data in
          try AES128CBC.run(encrypt: false, key: keyBytes, iv: iv, data: data)
        }
      }
    } catch {
      throw .library(String(describing: error))
    }
    // Check every padding byte without branching on secret data byte by byte.
    let padding = plain.withUnsafeBytes { bytes -> Int? in
      let last = Int(bytes[bytes.count - 1])
      guard last >= 1, last <= AES128CBC.blockSize else { return nil }
      var difference: UInt8 = 0
      for index in (bytes.count - last)..<bytes.count { difference |= bytes[index] ^ UInt8(last) }
      return difference == 0 ? last : nil
    }
    guard let padding else { throw .invalidPadding }
    plain.truncate(to: plain.count - padding)
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
    let iv = Gcrypt.nonce(count: ivLength)
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
