// The kinds of unlocker a key file can hold: each wraps the same data key its own way.

/// How an unlocker wraps the data key. A reader keeps the unlockers of kinds it does not know,
/// byte for byte, so an older secretd never drops one a newer one added.
package struct UnlockerKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  package let rawValue: UInt16
  package init(rawValue: UInt16) { self.rawValue = rawValue }

  /// A passphrase through Argon2id (``PassphraseUnlocker``).
  package static let passphrase = UnlockerKind(rawValue: 1)
  /// The machine's TPM 2.0 (``TPMUnlocker``: a key sealed under the owner hierarchy).
  package static let tpm2 = UnlockerKind(rawValue: 2)
  /// The login password, through PAM: a passphrase unlocker listed as the login's.
  package static let login = UnlockerKind(rawValue: 3)

  /// The word secretd's `ListUnlockers` and `AddUnlocker` name the kind by (`passphrase`, `tpm`,
  /// `login`), and `kind-N` for a kind this secretd does not know.
  package var name: String {
    switch self {
    case .passphrase: "passphrase"
    case .tpm2: "tpm"
    case .login: "login"
    default: "kind-\(rawValue)"
    }
  }

  package var description: String {
    switch self {
    case .passphrase: "passphrase"
    case .tpm2: "TPM 2.0"
    case .login: "login password"
    default: "kind \(rawValue)"
    }
  }
}

/// One way to the data key, as the key file stores it: its kind, its number in the file and
/// its kind's bytes (for a passphrase: Argon2id's parameters and the wrapped key).
package struct Unlocker: Equatable, Sendable {
  package let kind: UnlockerKind
  /// Unique within the file; what `secretctl` would list and remove it by.
  package let number: UInt32
  package let body: [UInt8]

  package init(kind: UnlockerKind, number: UInt32, body: [UInt8]) {
    (self.kind, self.number, self.body) = (kind, number, body)
  }
}
