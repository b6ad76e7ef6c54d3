// One record of a record log: a sealed put or delete of one item, and its identity in clear.
import TransferCrypto

/// A record as the log stores it: its kind and identity in clear (so the log can be checked,
/// recovered and compacted without the data key), its payload sealed with the identity bound in.
package struct LogRecord: Equatable, Sendable {
  package let kind: RecordKind
  package let identity: RecordIdentity
  /// Nonce, ciphertext and tag (``DataKey/seal(_:as:kind:)``); a delete seals no plaintext.
  package let sealed: [UInt8]

  package init(kind: RecordKind, identity: RecordIdentity, sealed: [UInt8]) {
    (self.kind, self.identity, self.sealed) = (kind, identity, sealed)
  }
}
