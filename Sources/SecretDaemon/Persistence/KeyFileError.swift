// Why a key file could not be read, unlocked or changed.
package import TransferCrypto

/// Why the key file was refused, or an unlocker could not be used, added or removed.
package enum KeyFileError: Error, Equatable, CustomStringConvertible {
  /// The file is not a key file this code can read whole; it was left as it is.
  case malformed(path: String, reason: String)
  /// A key file from a newer secretd.
  case unsupportedVersion(path: String, version: UInt16)
  /// No passphrase unlocker opened with this passphrase. Nothing was changed.
  case wrongPassphrase
  /// The file holds no unlocker of this kind.
  case noUnlocker(UnlockerKind)
  /// No unlocker has this number.
  case noSuchUnlocker(number: UInt32)
  /// Removing the last unlocker would leave the data key unreachable.
  case lastUnlocker
  /// The data key given is not the one this file wraps.
  case wrongDataKey
  /// Sealing or key derivation failed.
  case sealing(SealingError)
  /// The TPM could not be reached, or did not seal, or did not open TPM unlocker `number`.
  case tpm(number: UInt32?, TPMError)
  /// Reading or writing the file failed.
  case file(call: String, path: String, reason: String)

  package var description: String {
    switch self {
    case .malformed(let path, let reason): "\(path) is not a readable key file (\(reason)); it was left untouched"
    case .unsupportedVersion(let path, let version):
      "\(path) is a key file of version \(version), newer than this secretd reads: upgrade secretd"
    case .wrongPassphrase: "wrong passphrase: nothing was unlocked or changed"
    case .noUnlocker(let kind): "the key file has no \(kind) unlocker"
    case .noSuchUnlocker(let number): "the key file has no unlocker \(number)"
    case .lastUnlocker: "refusing to remove the last unlocker: add another first"
    case .wrongDataKey: "the data key given is not the one the key file wraps"
    case .sealing(let error): "\(error)"
    case .tpm(let number?, let error): "the TPM did not open unlocker \(number): \(error)"
    case .tpm(nil, let error): "\(error)"
    case .file(let call, let path, let reason): "\(call) on \(path) failed: \(reason)"
    }
  }
}
