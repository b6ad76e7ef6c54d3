import Synchronization

/// What the storage knows of each KV secret its keys use: the version local values are based on
/// (what check-and-set writes send), and the state the poller last saw.
final class KVVersions: Sendable {
  private struct Entry {
    /// The version this process last read or wrote.
    var base: Int?
    /// The version state last seen, by a read, a write or a poll; nil makes the next poll
    /// report a change.
    var polled: OpenBaoClient.VersionState?
    /// The base before the last read, while the core may still throw that read away.
    var baseBeforeRead: Int??
  }

  private let entries = Mutex<[String: Entry]>([:])

  /// A write of this process made `state`: local values are now based on it, and the poller
  /// does not report it as a change.
  func wrote(_ path: String, _ state: OpenBaoClient.VersionState) {
    entries.withLock { $0[path] = Entry(base: state.version, polled: state) }
  }

  /// A read gave `state`: the value the core adopts from it is based on it, unless the core
  /// throws the read away (`readDiscarded`).
  func read(_ path: String, _ state: OpenBaoClient.VersionState) {
    entries.withLock { entries in
      let before = entries[path]?.base
      entries[path] = Entry(base: state.version, polled: state, baseBeforeRead: .some(before))
    }
  }

  /// The core kept its local value instead of the last read's: writes are based again on what
  /// they were based on before, so that the newer version read is not overwritten unseen.
  func readDiscarded(_ path: String) {
    entries.withLock { entries in
      guard let before = entries[path]?.baseBeforeRead else { return }
      entries[path]?.base = before
      entries[path]?.baseBeforeRead = nil
    }
  }

  /// Makes the next poll report a change (after a conflict, so the newer value is loaded).
  func forgetPolled(_ path: String) {
    entries.withLock { $0[path]?.polled = nil }
  }

  func known(_ path: String) -> Int? { entries.withLock { $0[path]?.base } }

  func isKnown(_ path: String) -> Bool { entries.withLock { $0[path] != nil } }

  /// The watched paths.
  var paths: [String] { entries.withLock { Array($0.keys) } }

  /// Records what a poll saw; true when it differs from what was seen before.
  func polled(_ path: String, _ state: OpenBaoClient.VersionState?) -> Bool {
    entries.withLock { entries in
      guard var entry = entries[path] else { return false }
      let seen = state ?? OpenBaoClient.VersionState(version: 0, isDeleted: true)
      guard entry.polled != seen else { return false }
      entry.polled = seen
      entries[path] = entry
      return true
    }
  }
}
