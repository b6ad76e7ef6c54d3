// Secret bytes of one process, in libgcrypt's pool of locked memory.
import CGcrypt
import Glibc

/// Bytes in libgcrypt's locked memory (never swapped), wiped when released.
package final class LockedBytes: @unchecked Sendable {
  // SAFETY: the bytes are written only while the value is being made, by the one thread making
  // it (through `withUnsafeMutableBytes` before it is shared); after that they are only read,
  // and they are wiped and freed exactly once, in deinit.
  private let pointer: UnsafeMutableRawPointer
  package let count: Int

  /// `count` zero bytes.
  package init(count: Int) throws(CryptoError) {
    Gcrypt.initialize()
    guard let pointer = gcry_calloc_secure(1, max(count, 1)) else { throw .outOfSecureMemory }
    self.pointer = pointer
    self.count = count
  }

  // Wiped here too: when libsecret set up libgcrypt first, its allocator may have handed out
  // ordinary memory that gcry_free would not wipe.
  deinit {
    explicit_bzero(pointer, max(count, 1))
    gcry_free(pointer)
  }

  package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeRawBufferPointer(start: pointer, count: count))
  }

  package func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E)
    -> R
  {
    try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
  }
}

/// AES-128-CBC with PKCS#7 padding, as secrets cross the bus in a DH session.
package enum PaddedCBC {
  package static let ivLength = 16

  /// Encrypts `plain` with `key` and a fresh IV; returns the IV and the ciphertext (neither is
  /// secret). Only the last, padded block is copied, into locked memory.
  package static func encrypt(_ plain: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws(CryptoError) -> (
    iv: [UInt8], ciphertext: [UInt8]
  ) {
    let whole = plain.count / AES128CBC.blockSize * AES128CBC.blockSize
    let last = try LockedBytes(count: AES128CBC.blockSize)
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
