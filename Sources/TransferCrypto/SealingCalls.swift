// libgcrypt for sealing (secretd's persistent collection, secretctl's export files): AES-256-GCM,
// strong random bytes and Argon2id. Every error becomes a SealingError here.
import CGcrypt
import SystemCalls

package enum SealingCalls {
  package static let keyLength = 32
  package static let nonceLength = 12
  package static let tagLength = 16

  /// Fills `buffer` with random bytes fit for keys and salts. Wraps gcry_randomize with
  /// GCRY_STRONG_RANDOM.
  package static func randomize(_ buffer: UnsafeMutableRawBufferPointer) {
    Gcrypt.initialize()
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    gcry_randomize(base, buffer.count, GCRY_STRONG_RANDOM)
  }

  /// Fills `buffer` with unpredictable, never-repeating bytes for nonces. Wraps gcry_create_nonce.
  package static func nonce(_ buffer: UnsafeMutableRawBufferPointer) {
    Gcrypt.initialize()
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    gcry_create_nonce(base, buffer.count)
  }

  /// Encrypts `plaintext` into `ciphertext` (the same length) with AES-256-GCM under `key`,
  /// `nonce` and `associatedData`, and writes the 16-byte tag into `tag`. Wraps gcry_cipher_open
  /// (GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM, GCRY_CIPHER_SECURE), gcry_cipher_setkey,
  /// gcry_cipher_setiv, gcry_cipher_authenticate, gcry_cipher_encrypt and gcry_cipher_gettag.
  package static func sealGCM(
    key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
  ) throws(SealingError) {
    guard ciphertext.count == plaintext.count, tag.count == tagLength else {
      throw .malformed("buffers of \(ciphertext.count) and \(tag.count) bytes for \(plaintext.count)")
    }
    try withGCM(key: key, nonce: nonce, associatedData: associatedData) { (handle) throws(SealingError) in
      // An empty plaintext (a delete record) is authenticated alone: the tag covers it.
      if plaintext.count > 0 {
        try check(
          gcry_cipher_encrypt(handle, ciphertext.baseAddress, ciphertext.count, plaintext.baseAddress, plaintext.count),
          "gcry_cipher_encrypt")
      }
      try check(gcry_cipher_gettag(handle, tag.baseAddress, tag.count), "gcry_cipher_gettag")
    }
  }

  /// Decrypts `ciphertext` into `plaintext` (the same length) and checks `tag`; throws
  /// ``SealingError/refused`` when it does not match, after wiping `plaintext`. Wraps
  /// gcry_cipher_decrypt and gcry_cipher_checktag.
  package static func openGCM(
    key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, plaintext: UnsafeMutableRawBufferPointer
  ) throws(SealingError) {
    guard ciphertext.count == plaintext.count, tag.count == tagLength else {
      throw .malformed("buffers of \(plaintext.count) and \(tag.count) bytes for \(ciphertext.count)")
    }
    do {
      try withGCM(key: key, nonce: nonce, associatedData: associatedData) { (handle) throws(SealingError) in
        if ciphertext.count > 0 {
          try check(
            gcry_cipher_decrypt(
              handle, plaintext.baseAddress, plaintext.count, ciphertext.baseAddress, ciphertext.count),
            "gcry_cipher_decrypt")
        }
        try check(gcry_cipher_checktag(handle, tag.baseAddress, tag.count), "gcry_cipher_checktag")
      }
    } catch {
      // The plaintext of a refused record is never handed out: wiped before the error leaves.
      Memory.wipe(plaintext)
      throw error
    }
  }

  /// Derives `output.count` bytes from `passphrase` with Argon2id (RFC 9106): `iterations`
  /// passes over `memoryKiB` KiB in `parallelism` lanes, computed on this thread. Wraps
  /// gcry_kdf_open (GCRY_KDF_ARGON2, GCRY_KDF_ARGON2ID), gcry_kdf_compute, gcry_kdf_final and
  /// gcry_kdf_close.
  package static func argon2id(
    passphrase: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: UInt32, memoryKiB: UInt32,
    parallelism: UInt32, secret: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
    associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
    into output: UnsafeMutableRawBufferPointer
  ) throws(SealingError) {
    Gcrypt.initialize()
    let parameters: [UInt] = [UInt(output.count), UInt(iterations), UInt(memoryKiB), UInt(parallelism)]
    var handle: gcry_kdf_hd_t?
    let opened = parameters.withUnsafeBufferPointer { parameters in
      gcry_kdf_open(
        &handle, Int32(GCRY_KDF_ARGON2.rawValue), Int32(GCRY_KDF_ARGON2ID.rawValue), parameters.baseAddress,
        UInt32(parameters.count), passphrase.baseAddress, passphrase.count, salt.baseAddress, salt.count,
        secret.baseAddress, secret.count, associatedData.baseAddress, associatedData.count)
    }
    try check(opened, "gcry_kdf_open")
    guard let handle else { throw .library(call: "gcry_kdf_open", code: 0, text: "no handle") }
    defer { gcry_kdf_close(handle) }
    try check(gcry_kdf_compute(handle, nil), "gcry_kdf_compute")
    try check(gcry_kdf_final(handle, output.count, output.baseAddress), "gcry_kdf_final")
  }

  private static func withGCM(
    key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
    _ body: (gcry_cipher_hd_t) throws(SealingError) -> Void
  ) throws(SealingError) {
    guard key.count == keyLength, nonce.count == nonceLength else {
      throw .malformed("a key of \(key.count) bytes and a nonce of \(nonce.count)")
    }
    Gcrypt.initialize()
    var handle: gcry_cipher_hd_t?
    try check(
      gcry_cipher_open(
        &handle, Int32(GCRY_CIPHER_AES256.rawValue), Int32(GCRY_CIPHER_MODE_GCM.rawValue),
        UInt32(GCRY_CIPHER_SECURE.rawValue)),
      "gcry_cipher_open")
    guard let handle else { throw .library(call: "gcry_cipher_open", code: 0, text: "no handle") }
    defer { gcry_cipher_close(handle) }
    try check(gcry_cipher_setkey(handle, key.baseAddress, key.count), "gcry_cipher_setkey")
    try check(gcry_cipher_setiv(handle, nonce.baseAddress, nonce.count), "gcry_cipher_setiv")
    if associatedData.count > 0 {
      try check(
        gcry_cipher_authenticate(handle, associatedData.baseAddress, associatedData.count), "gcry_cipher_authenticate")
    }
    try body(handle)
  }

  /// Turns a gcry_error_t into a SealingError: a checksum failure (GPG_ERR_CHECKSUM) is a
  /// refusal, anything else the library's failure. Wraps gcry_err_code and gcry_strerror.
  private static func check(_ code: gcry_error_t, _ call: String) throws(SealingError) {
    guard code != 0 else { return }
    let errorCode = gcry_err_code(code)
    if errorCode == GPG_ERR_CHECKSUM { throw .refused }
    let text = gcry_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    throw .library(call: call, code: errorCode.rawValue, text: text)
  }
}
