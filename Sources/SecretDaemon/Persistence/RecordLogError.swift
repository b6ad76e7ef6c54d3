// Why a record log was refused, or a record not appended.
package import SystemCalls
package import TransferCrypto

/// Why a record log could not be opened whole, written or compacted.
package enum RecordLogError: Error, Equatable, CustomStringConvertible {
  /// Damage before the tail: the file is refused whole and left untouched, to be set aside.
  case damaged(path: String, offset: Int, reason: String)
  /// A log written by a newer secretd.
  case unsupportedVersion(path: String, version: UInt16)
  /// There is no log at this path.
  case noSuchLog(path: String)
  /// ``RecordLog/create(at:keyID:)`` found a file there already.
  case exists(path: String)
  /// Another process holds the log open for writing.
  case inUse(path: String)
  /// A record the caller gave that the log cannot take (a stale generation, too large).
  case invalidRecord(String)
  /// A live record's seal did not open: the log is refused whole.
  case sealing(path: String, record: String, SealingError)
  /// A file call failed. When it was a sync, or a write that could not be undone, the log
  /// takes no more records until it is opened again.
  case file(FileCallError)
  /// An earlier write or sync failed, so what the file holds is uncertain: open it again.
  case broken(path: String, cause: String)

  package var description: String {
    switch self {
    case .damaged(let path, let offset, let reason):
      "\(path) is damaged at byte \(offset) (\(reason)): refused whole"
    case .unsupportedVersion(let path, let version):
      "\(path) is a record log of version \(version), newer than this secretd reads: upgrade secretd"
    case .noSuchLog(let path): "no record log at \(path)"
    case .exists(let path): "\(path) exists already"
    case .inUse(let path): "\(path) is held by another process (another secretd?)"
    case .invalidRecord(let reason): "record refused: \(reason)"
    case .sealing(let path, let record, let error): "\(path): \(record) did not open (\(error)): refused whole"
    case .file(let error): "\(error.call) on \(error.path) failed: \(error.errno)"
    case .broken(let path, let cause): "\(path) takes no more records after \(cause): open it again"
    }
  }

  /// Whether the file itself is at fault: damaged, or holding a record that does not open
  /// (given the key the log names). Such a log is never served in part: it is set aside whole.
  /// A failing call, a lock held or a newer version are not damage: the file may be fine.
  package var isDamage: Bool {
    switch self {
    case .damaged, .sealing(_, _, .refused), .sealing(_, _, .malformed): true
    default: false
    }
  }
}
