// What a persistent value last read or wrote, so that its own writes are not taken for news.
import Synchronization

/// What a persistent value knows of its store: the contents it last wrote or read (so its own
/// writes do not come back as changes), whether a write is under way, and undecodable contents
/// that must be kept before they are overwritten.
final class KnownContents<Stored: Equatable & Sendable>: Sendable {
  private struct State {
    var contents: Stored??
    var writes = 0
    var writesBegun: UInt64 = 0
    var awaitingCopy: Stored?
  }

  private let state = Mutex(State())

  /// Whether `stored`, read after `writesBegun` writes had begun, differs from what was last
  /// written or read, with no write begun since (a write begun after the read makes it stale:
  /// it would be taken for news against that write's contents).
  func isNews(_ stored: Stored?, noWriteBegunSince writesBegun: UInt64) -> Bool {
    state.withLock { $0.writesBegun == writesBegun && $0.writes == 0 && $0.contents != .some(stored) }
  }

  /// Records what the store holds. Undecodable contents read earlier are gone once other
  /// contents are there: there is nothing left to keep.
  func replace(with stored: Stored?) {
    state.withLock { state in
      if state.contents != .some(stored) { state.awaitingCopy = nil }
      state.contents = .some(stored)
    }
  }

  /// While a write is under way a read may see the store before or after it: neither is news.
  var isWriting: Bool { state.withLock { $0.writes > 0 } }

  /// How many writes have begun so far.
  var writesBegun: UInt64 { state.withLock { $0.writesBegun } }

  /// Marks a write of `stored` (nil: a delete) as begun; returns what was known before.
  func beginWrite(_ stored: Stored?) -> Stored?? {
    state.withLock { state in
      state.writes += 1
      state.writesBegun += 1
      defer { state.contents = .some(stored) }
      return state.contents
    }
  }

  func endWrite() { state.withLock { $0.writes -= 1 } }

  /// Marks the write as failed, the store untouched: what was known before is known again.
  func failWrite(restoring previous: Stored??) {
    state.withLock { state in
      state.writes -= 1
      state.contents = previous
    }
  }

  func keepForCopy(_ stored: Stored) { state.withLock { $0.awaitingCopy = stored } }

  var awaitingCopy: Stored? { state.withLock { $0.awaitingCopy } }

  func copyKept() { state.withLock { $0.awaitingCopy = nil } }
}
