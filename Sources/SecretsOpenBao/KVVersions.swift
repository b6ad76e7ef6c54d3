import Synchronization

/// What the store knows of each KV secret its keys use: the version local values are based on
/// (what check-and-set writes send), the newest version this process knows exists (no read may
/// give less), the state the poller last saw, and a write whose outcome is unknown.
final class KVVersions: Sendable {
  /// A write that was sent but never confirmed: it may be stored as version `base + 1`.
  struct UnconfirmedWrite: Sendable, Equatable {
    let base: Int
    let bytes: [UInt8]
  }

  private struct Entry {
    /// The version this process last read or wrote.
    var base: Int?
    /// The newest version this process knows exists: read, written, or named by a conflict.
    var newest = 0
    /// The version state the poller last saw; nil makes the next poll report a change.
    var polled: OpenBaoClient.VersionState?
    /// The base before the last read, while the core may still throw that read away.
    var baseBeforeRead: Int??
    var unconfirmed: UnconfirmedWrite?
  }

  private let entries = Mutex<[String: Entry]>([:])

  /// A write of this process made `state`: local values are now based on it. The poller still
  /// reports it (the persistence core recognises its own writes).
  func wrote(_ path: String, _ state: OpenBaoClient.VersionState) {
    entries.withLock { entries in
      var entry = entries[path] ?? Entry()
      entry.base = state.version
      entry.newest = max(entry.newest, state.version)
      entry.baseBeforeRead = nil
      entry.unconfirmed = nil
      entries[path] = entry
    }
  }

  /// A read gave `state`: the value the core adopts from it is based on it, unless the core
  /// throws the read away (`readDiscarded`).
  func read(_ path: String, _ state: OpenBaoClient.VersionState) {
    entries.withLock { entries in
      var entry = entries[path] ?? Entry()
      entry.baseBeforeRead = .some(entry.base)
      entry.base = state.version
      entry.newest = max(entry.newest, state.version)
      entry.polled = state
      entries[path] = entry
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

  /// A check-and-set write found `newest` (nil: unknown) in place of its base: no read may give
  /// an older version from now on, and the next poll reports a change, so the newer value is
  /// loaded.
  func conflicted(_ path: String, newest: Int?) {
    entries.withLock { entries in
      var entry = entries[path] ?? Entry()
      entry.newest = max(entry.newest, newest ?? 0)
      entry.polled = nil
      entries[path] = entry
    }
  }

  /// A write based on `base` was sent and not confirmed.
  func sentUnconfirmed(_ path: String, base: Int, bytes: [UInt8]) {
    entries.withLock { entries in
      var entry = entries[path] ?? Entry()
      entry.unconfirmed = UnconfirmedWrite(base: base, bytes: bytes)
      entries[path] = entry
    }
  }

  /// The unconfirmed write based on `base`, if there is one.
  func unconfirmed(_ path: String, base: Int) -> UnconfirmedWrite? {
    entries.withLock { entries in entries[path]?.unconfirmed.flatMap { $0.base == base ? $0 : nil } }
  }

  /// The version local values are based on; nil before the first read or write.
  func base(_ path: String) -> Int? { entries.withLock { $0[path]?.base } }

  /// The newest version this process knows exists (0 when none).
  func newest(_ path: String) -> Int { entries.withLock { $0[path]?.newest ?? 0 } }

  /// Records what a poll saw; true when it may differ from what the keys of `path` hold: it
  /// differs from what was seen before, or nothing was.
  func polled(_ path: String, _ state: OpenBaoClient.VersionState?) -> Bool {
    entries.withLock { entries in
      var entry = entries[path] ?? Entry()
      let seen = state ?? OpenBaoClient.VersionState(version: 0, isDeleted: true)
      guard entry.polled != seen else { return false }
      entry.polled = seen
      entries[path] = entry
      return true
    }
  }
}
