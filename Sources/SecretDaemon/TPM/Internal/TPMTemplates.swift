// The two objects the TPM unlocker asks a TPM for, described once. The storage key's template
// must never change: the TPM derives the same key from the same template and its owner seed,
// and a sealed object loads only under the key it was sealed under.
import CTPM2

enum TPMTemplates {
  /// The storage key (template 1 of the TPM unlocker's body): a primary ECC NIST P-256 key of
  /// the owner hierarchy for restricted decryption with AES-128-CFB, as TCG's storage root key
  /// template has it; made afresh each time, never kept in the TPM.
  static func storageKey() -> TPM2B_PUBLIC {
    var template = TPM2B_PUBLIC()
    template.publicArea.type = TPM2_ALG_ECC
    template.publicArea.nameAlg = TPM2_ALG_SHA256
    template.publicArea.objectAttributes =
      TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH
      | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT
    template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES
    template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
    template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB
    template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL
    template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256
    template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL
    return template
  }

  /// A sealed data object: keyed-hash with no scheme, which the TPM returns only through Unseal,
  /// never lets leave this TPM (fixedTPM) and unseals with an empty password; noDA, so that
  /// no failure counts towards the TPM's dictionary-attack lockout.
  static func sealedData() -> TPM2B_PUBLIC {
    var template = TPM2B_PUBLIC()
    template.publicArea.type = TPM2_ALG_KEYEDHASH
    template.publicArea.nameAlg = TPM2_ALG_SHA256
    template.publicArea.objectAttributes =
      TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA
    template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL
    return template
  }
}
