// Why a TPM 2.0 did not answer, seal or unseal. tpm2-tss's response codes become these in one
// place (Internal/TPMContext.swift), each with the text Tss2_RC_Decode gives it.

/// A TSS2 response code other than success: the call that returned it, the code (the TPM's
/// own, or one of a tpm2-tss layer: ESAPI, the TCTI, marshalling) and tpm2-tss's text for it.
package struct TPMResponse: Equatable, Sendable, CustomStringConvertible {
  /// The tpm2-tss function that returned the code, such as `Esys_Load`.
  package let call: String
  /// The TSS2_RC.
  package let code: UInt32
  /// What Tss2_RC_Decode says of it, such as `tpm:parameter(1):integrity check failed`.
  package let text: String

  package var description: String { "\(call): \(text)" }
}

/// Why the TPM could not be reached, or refused to seal or unseal.
package enum TPMError: Error, Equatable, CustomStringConvertible {
  /// No TPM answered through the TCTI (nil: tpm2-tss's default, /dev/tpmrm0 first).
  case unreachable(tcti: String?, TPMResponse)
  /// The TPM would not make its storage key under the owner hierarchy.
  case noStorageKey(TPMResponse)
  /// The TPM refused to load the sealed object: another TPM sealed it, this one's owner
  /// hierarchy was cleared since, or its bytes were changed (`TPM_RC_INTEGRITY`, and the like).
  case foreignObject(TPMResponse)
  /// The TPM, or ESAPI, refused a command for another reason.
  case refused(TPMResponse)
  /// Bytes that are not what sealing stored.
  case malformed(String)
  /// Locked memory for the sealed secret could not be had (RLIMIT_MEMLOCK).
  case noLockedMemory(bytes: Int)

  package var description: String {
    switch self {
    case .unreachable(let tcti, let response):
      "no TPM answered through "
        + (tcti.map { "the TCTI '\($0)'" } ?? "tpm2-tss's default TCTI (/dev/tpmrm0, then /dev/tpm0, ...)")
        + " (\(response)): name the TPM with secretd --tcti, or make /dev/tpmrm0 usable (it belongs to group tss)"
    case .noStorageKey(let response):
      "the TPM would not make its storage key under the owner hierarchy (\(response)); a TPM whose owner "
        + "hierarchy has a password cannot be used"
    case .foreignObject(let response):
      "the TPM refused the sealed key (\(response)): another TPM sealed it, this TPM's owner hierarchy was "
        + "cleared since, or the key file was changed"
    case .refused(let response):
      "the TPM refused (\(response))"
    case .malformed(let reason):
      "not a key this TPM sealed: \(reason)"
    case .noLockedMemory(let bytes):
      "no locked memory for \(bytes) secret bytes: raise LimitMEMLOCK (RLIMIT_MEMLOCK)"
    }
  }
}
