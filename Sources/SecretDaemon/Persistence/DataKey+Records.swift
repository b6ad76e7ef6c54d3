// Sealing one record with the data key: the record's identity as associated data.
package import SecretMemory
package import TransferCrypto

extension DataKey {
  /// Seals `plaintext` as the record `identity` of `kind`: a fresh random nonce, the ciphertext
  /// and the tag. The plaintext is read in place; nothing of it is copied.
  /// Wraps gcry_create_nonce and AES-256-GCM (SealingCalls).
  package func seal(_ plaintext: SecretBytes, as identity: RecordIdentity, kind: RecordKind = .put)
    throws(SealingError) -> [UInt8]
  {
    try seal(plaintext, associatedData: identity.associatedData(kind: kind))
  }

  /// Opens bytes ``seal(_:as:kind:)`` made, as the record `identity` of `kind`, into locked
  /// memory. Throws ``SealingError/refused`` for the wrong key, another identity or kind, or
  /// any changed byte; nothing of the plaintext is kept then.
  package func open(_ sealed: some Collection<UInt8>, as identity: RecordIdentity, kind: RecordKind = .put)
    throws(SealingError) -> SecretBytes
  {
    try open(sealed, associatedData: identity.associatedData(kind: kind))
  }
}
