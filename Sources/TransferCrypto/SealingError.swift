// Why sealing, opening or deriving a key failed: libgcrypt's errors become these, in one place
// (SealingCalls.swift).

/// Why a record or a wrapped key could not be sealed or opened, or a key derived.
package enum SealingError: Error, Equatable, CustomStringConvertible {
  /// The authentication tag did not match: the wrong key, the wrong identity (a record moved or
  /// replayed under another), or bytes changed since sealing. Nothing was revealed.
  case refused
  /// The sealed bytes are not what sealing writes (too short for a nonce and a tag).
  case malformed(String)
  /// Locked memory for a key or a plaintext could not be had (RLIMIT_MEMLOCK).
  case noLockedMemory(bytes: Int)
  /// libgcrypt failed: the call, its error code (`gcry_err_code`) and its text.
  case library(call: String, code: UInt32, text: String)

  package var description: String {
    switch self {
    case .refused:
      "sealed bytes refused: wrong key or identity, or changed since sealing"
    case .malformed(let reason):
      "sealed bytes malformed: \(reason)"
    case .noLockedMemory(let bytes):
      "no locked memory for \(bytes) secret bytes: raise LimitMEMLOCK (RLIMIT_MEMLOCK)"
    case .library(let call, let code, let text):
      "libgcrypt's \(call) failed (\(code)): \(text)"
    }
  }
}
