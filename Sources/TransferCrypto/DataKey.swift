// The key that seals a persistent collection's records (random; on disk only wrapped by
// unlockers) or an export file (from its passphrase): 32 bytes, only ever in locked memory.
package import SecretMemory

/// The AES-256 key every record of a sealed collection is encrypted with.
///
/// Its bytes live in a ``SecretBytes`` (locked, wiped when released). It is made once, with the
/// collection, and never changes: unlockers wrap it, so adding or removing one re-encrypts no
/// record.
package struct DataKey: Sendable {
  package static let length = SealingCalls.keyLength
  package let bytes: SecretBytes

  /// A key from `bytes`, which must be 32.
  package init(bytes: SecretBytes) throws(SealingError) {
    guard bytes.count == Self.length else { throw .malformed("a data key of \(bytes.count) bytes, not 32") }
    self.bytes = bytes
  }

  /// A new random key, in locked memory. Wraps gcry_randomize (GCRY_STRONG_RANDOM).
  package static func random() throws(SealingError) -> DataKey {
    guard let bytes = SecretBytes(lockedCount: length) else { throw .noLockedMemory(bytes: length) }
    bytes.withUnsafeMutableBytes { SealingCalls.randomize($0) }
    return try DataKey(bytes: bytes)
  }
}

extension DataKey {
  /// The key Argon2id derives from `passphrase` with `parameters`, in locked memory, computed on
  /// this thread (seconds at the standard cost).
  package static func derived(from passphrase: SecretBytes, _ parameters: Argon2Parameters) throws(SealingError)
    -> DataKey
  {
    guard let derived = SecretBytes(lockedCount: length) else { throw .noLockedMemory(bytes: length) }
    try passphrase.withUnsafeBytes { (passphrase) throws(SealingError) in
      try parameters.salt.withRawBytes { (salt) throws(SealingError) in
        try derived.withUnsafeMutableBytes { (output) throws(SealingError) in
          try SealingCalls.argon2id(
            passphrase: passphrase, salt: salt, iterations: parameters.iterations, memoryKiB: parameters.memoryKiB,
            parallelism: parameters.parallelism, into: output)
        }
      }
    }
    return try DataKey(bytes: derived)
  }
}
