// The key that seals a persistent collection's records: random, 32 bytes, only ever in locked
// memory, on disk only wrapped by unlockers (KeyFile).
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
