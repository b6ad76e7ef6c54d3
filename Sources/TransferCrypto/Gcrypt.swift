// libgcrypt wrappers for both ends of a transfer session (sealing has SealingCalls.swift).
import CGcrypt
import Synchronization

/// A failure inside libgcrypt, keeping its code and text.
package struct GcryptError: Error, CustomStringConvertible {
  package let code: UInt32
  package let operation: String

  package var description: String {
    let text = gcry_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    return "\(operation) failed: \(text)"
  }
}

package enum Gcrypt {
  private static let initialized = Mutex(false)

  /// Initialises libgcrypt once: version check, a secure-memory pool of `securePoolBytes` for
  /// its own temporaries (MPIs and cipher contexts), no warnings on stderr. The first call
  /// decides; a client makes it before libsecret can, so that the two never initialise libgcrypt
  /// at once. Wraps gcry_check_version, gcry_control.
  package static func initialize(securePoolBytes: Int = 64 * 1024) {
    initialized.withLock { done in
      guard !done else { return }
      done = true
      if cgcrypt_initialized() != 0 { return }
      _ = gcry_check_version(nil)
      _ = cgcrypt_disable_secmem_warnings()
      _ = cgcrypt_init_secmem(UInt32(securePoolBytes))
      _ = cgcrypt_initialization_finished()
    }
  }

  /// Public random bytes such as IVs. Wraps gcry_create_nonce.
  package static func nonce(count: Int) -> [UInt8] {
    initialize()
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { raw in
      if let base = raw.baseAddress { gcry_create_nonce(base, raw.count) }
    }
    return bytes
  }
}

/// A big integer, in secure memory when it holds a secret. Wraps gcry_mpi_t.
package final class BigInteger {
  let raw: gcry_mpi_t

  private init(raw: gcry_mpi_t) { self.raw = raw }

  deinit { gcry_mpi_release(raw) }

  /// Parses unsigned big-endian bytes of any length. Wraps gcry_mpi_scan(GCRYMPI_FMT_USG).
  package static func fromUnsignedBytes(_ bytes: UnsafeRawBufferPointer) throws(GcryptError) -> BigInteger {
    Gcrypt.initialize()
    var result: gcry_mpi_t?
    let code = gcry_mpi_scan(&result, GCRYMPI_FMT_USG, bytes.baseAddress, bytes.count, nil)
    guard code == 0, let result else { throw GcryptError(code: code, operation: "gcry_mpi_scan") }
    return BigInteger(raw: result)
  }

  /// Parses hexadecimal text. Wraps gcry_mpi_scan(GCRYMPI_FMT_HEX).
  package static func fromHex(_ text: String) throws(GcryptError) -> BigInteger {
    Gcrypt.initialize()
    var result: gcry_mpi_t?
    let code = text.withCString { gcry_mpi_scan(&result, GCRYMPI_FMT_HEX, $0, 0, nil) }
    guard code == 0, let result else { throw GcryptError(code: code, operation: "gcry_mpi_scan") }
    return BigInteger(raw: result)
  }

  package static func small(_ value: UInt) -> BigInteger? {
    Gcrypt.initialize()
    guard let mpi = gcry_mpi_new(64) else { return nil }
    gcry_mpi_set_ui(mpi, value)
    return BigInteger(raw: mpi)
  }

  /// A random secret exponent of `bits` bits, in secure memory. Wraps gcry_mpi_randomize.
  package static func randomSecret(bits: Int) -> BigInteger? {
    Gcrypt.initialize()
    guard let mpi = gcry_mpi_snew(UInt32(bits)) else { return nil }
    gcry_mpi_randomize(mpi, UInt32(bits), GCRY_STRONG_RANDOM)
    return BigInteger(raw: mpi)
  }

  /// `self ^ exponent mod modulus`, in secure memory. Wraps gcry_mpi_powm.
  package func power(_ exponent: BigInteger, modulo modulus: BigInteger) -> BigInteger? {
    guard let result = gcry_mpi_snew(UInt32(modulus.bitCount)) else { return nil }
    gcry_mpi_powm(result, raw, exponent.raw, modulus.raw)
    return BigInteger(raw: result)
  }

  package func minus(_ value: UInt) -> BigInteger? {
    guard let result = gcry_mpi_new(UInt32(bitCount)) else { return nil }
    gcry_mpi_sub_ui(result, raw, value)
    return BigInteger(raw: result)
  }

  /// Wraps gcry_mpi_cmp.
  package func compare(_ other: BigInteger) -> Int { Int(gcry_mpi_cmp(raw, other.raw)) }

  /// Wraps gcry_mpi_get_nbits.
  package var bitCount: Int { Int(gcry_mpi_get_nbits(raw)) }

  /// Writes the value as unsigned big-endian bytes left-padded with zeros to `length`.
  /// Wraps gcry_mpi_print(GCRYMPI_FMT_USG).
  package func write(paddedTo length: Int, into output: UnsafeMutableRawBufferPointer) throws(GcryptError) {
    var needed = 0
    var code = gcry_mpi_print(GCRYMPI_FMT_USG, nil, 0, &needed, raw)
    guard code == 0, needed <= length, output.count >= length, let base = output.baseAddress else {
      throw GcryptError(code: code, operation: "gcry_mpi_print")
    }
    var written = 0
    let offset = length - needed
    for index in 0..<offset { output[index] = 0 }
    code = gcry_mpi_print(GCRYMPI_FMT_USG, base + offset, needed, &written, raw)
    guard code == 0, written == needed else { throw GcryptError(code: code, operation: "gcry_mpi_print") }
  }
}

/// HMAC-SHA256 in secure memory. Wraps gcry_md_open, gcry_md_setkey, gcry_md_write, gcry_md_read.
package enum HMACSHA256 {
  package static let length = 32

  /// Writes HMAC(key, message) into `output` (32 bytes).
  package static func authenticate(
    key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws(GcryptError) {
    Gcrypt.initialize()
    var handle: gcry_md_hd_t?
    var code = gcry_md_open(
      &handle, Int32(GCRY_MD_SHA256.rawValue), UInt32(GCRY_MD_FLAG_HMAC.rawValue | GCRY_MD_FLAG_SECURE.rawValue))
    guard code == 0, let handle else { throw GcryptError(code: code, operation: "gcry_md_open") }
    defer { gcry_md_close(handle) }
    code = gcry_md_setkey(handle, key.baseAddress, key.count)
    guard code == 0 else { throw GcryptError(code: code, operation: "gcry_md_setkey") }
    if let base = message.baseAddress, message.count > 0 { gcry_md_write(handle, base, message.count) }
    guard let digest = gcry_md_read(handle, Int32(GCRY_MD_SHA256.rawValue)), output.count >= length,
      let outputBase = output.baseAddress
    else { throw GcryptError(code: 0, operation: "gcry_md_read") }
    outputBase.copyMemory(from: digest, byteCount: length)
  }
}

/// AES-128-CBC without padding, with a context in secure memory.
/// Wraps gcry_cipher_open, gcry_cipher_setkey, gcry_cipher_setiv, gcry_cipher_encrypt/decrypt.
package enum AES128CBC {
  package static let blockSize = 16

  /// Encrypts or decrypts `data` in place.
  package static func run(
    encrypt: Bool, key: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, data: UnsafeMutableRawBufferPointer
  ) throws(GcryptError) {
    try withCipher(key: key, iv: iv) { (handle) throws(GcryptError) in
      guard data.count > 0 else { return }
      let code =
        encrypt
        ? gcry_cipher_encrypt(handle, data.baseAddress, data.count, nil, 0)
        : gcry_cipher_decrypt(handle, data.baseAddress, data.count, nil, 0)
      guard code == 0 else {
        throw GcryptError(code: code, operation: encrypt ? "gcry_cipher_encrypt" : "gcry_cipher_decrypt")
      }
    }
  }

  /// Encrypts the whole blocks of `input` into the start of `output`, then `last` (one block, in
  /// place) chained after them into the rest of `output`: the plain text never leaves `input`
  /// and `last`.
  package static func encrypt(
    key: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, input: UnsafeRawBufferPointer,
    last: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws(GcryptError) {
    try withCipher(key: key, iv: iv) { (handle) throws(GcryptError) in
      var code: UInt32 = 0
      if input.count > 0 {
        code = gcry_cipher_encrypt(handle, output.baseAddress, input.count, input.baseAddress, input.count)
      }
      if code == 0 { code = gcry_cipher_encrypt(handle, last.baseAddress, last.count, nil, 0) }
      guard code == 0 else { throw GcryptError(code: code, operation: "gcry_cipher_encrypt") }
      if let to = output.baseAddress, let from = last.baseAddress {
        (to + input.count).copyMemory(from: from, byteCount: last.count)
      }
    }
  }

  private static func withCipher(
    key: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, _ body: (gcry_cipher_hd_t) throws(GcryptError) -> Void
  ) throws(GcryptError) {
    Gcrypt.initialize()
    var handle: gcry_cipher_hd_t?
    var code = gcry_cipher_open(
      &handle, Int32(GCRY_CIPHER_AES.rawValue), Int32(GCRY_CIPHER_MODE_CBC.rawValue),
      UInt32(GCRY_CIPHER_SECURE.rawValue))
    guard code == 0, let handle else { throw GcryptError(code: code, operation: "gcry_cipher_open") }
    defer { gcry_cipher_close(handle) }
    code = gcry_cipher_setkey(handle, key.baseAddress, key.count)
    guard code == 0 else { throw GcryptError(code: code, operation: "gcry_cipher_setkey") }
    code = gcry_cipher_setiv(handle, iv.baseAddress, iv.count)
    guard code == 0 else { throw GcryptError(code: code, operation: "gcry_cipher_setiv") }
    try body(handle)
  }
}
