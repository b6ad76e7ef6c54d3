// Sealing a secret to the machine's TPM 2.0, and getting it back: the secret becomes a sealed
// data object under the owner hierarchy's storage key, which the TPM derives again each time.
// Both directions send the secret through a salted session with parameter encryption, so it
// never crosses the wire to the TPM in clear. Every transient object and session is flushed.
package import SecretMemory

/// A secret sealed by a TPM: the sealed object's public and private areas (Tss2_MU marshalling).
/// The private area is encrypted under the storage key, so only the TPM that sealed it, with
/// the same owner seed, loads it again.
package struct TPMSealedObject: Equatable, Sendable {
  package var publicArea: [UInt8]
  package var privateArea: [UInt8]

  package init(publicArea: [UInt8], privateArea: [UInt8]) {
    (self.publicArea, self.privateArea) = (publicArea, privateArea)
  }
}

/// Seals and unseals through the TPM a TCTI configuration names (nil: tpm2-tss's default).
/// Every call blocks until the TPM answers.
package enum TPMSealing {
  /// Seals `secret` (at most 128 bytes) to the TPM.
  package static func seal(_ secret: SecretBytes, tcti: String?) throws(TPMError) -> TPMSealedObject {
    let tpm = try TPMContext(tcti: tcti)
    return try withStorageKey(tpm) { (storageKey) throws(TPMError) in
      try withSession(tpm, saltedTo: storageKey) { (session) throws(TPMError) in
        try tpm.encrypt(session, command: true)
        let (publicArea, privateArea) = try tpm.create(
          sealing: secret, template: TPMTemplates.sealedData(), parent: storageKey, session: session)
        return TPMSealedObject(publicArea: publicArea, privateArea: privateArea)
      }
    }
  }

  /// The secret in `object`, which this TPM sealed, into locked memory. Another TPM, or this
  /// one after its owner hierarchy was cleared, refuses with ``TPMError/foreignObject(_:)``.
  package static func unseal(_ object: TPMSealedObject, tcti: String?) throws(TPMError) -> SecretBytes {
    let tpm = try TPMContext(tcti: tcti)
    return try withStorageKey(tpm) { (storageKey) throws(TPMError) in
      let loaded = try tpm.load(
        publicArea: object.publicArea, privateArea: object.privateArea, parent: storageKey)
      defer { tpm.flush(loaded) }
      return try withSession(tpm, saltedTo: storageKey) { (session) throws(TPMError) in
        try tpm.encrypt(session, response: true)
        return try tpm.unseal(loaded, session: session)
      }
    }
  }

  private static func withStorageKey<R>(_ tpm: TPMContext, _ body: (TPMHandle) throws(TPMError) -> R) throws(TPMError)
    -> R
  {
    let key = try tpm.createPrimary(TPMTemplates.storageKey())
    defer { tpm.flush(key) }
    return try body(key)
  }

  private static func withSession<R>(
    _ tpm: TPMContext, saltedTo key: TPMHandle, _ body: (TPMHandle) throws(TPMError) -> R
  ) throws(TPMError) -> R {
    let session = try tpm.startEncryptedSession(saltedTo: key)
    defer { tpm.flush(session) }
    return try body(session)
  }
}
