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
  }

  private let entries = Mutex<[String: Entry]>([:])

  /// A read or write of this process saw `state`: local values are now based on it, and the
  /// poller does not report it as a change.
  func saw(_ path: String, _ state: OpenBaoClient.VersionState) {
    entries.withLock { $0[path] = Entry(base: state.version, polled: state) }
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
