public import Synchronization

/// The scopes of ``SharedChangeTracker``s that are running, and what a mutation does in them.
///
/// While no scope runs anywhere, reads and mutations cost one atomic load more; the task-local
/// values are read only once one does.
@usableFromInline
enum ChangeTracking {
  /// How many `track` and `assert` scopes are running, in any task.
  @usableFromInline static let scopes = Atomic<Int>(0)
  /// The trackers of the `track` scopes the current task runs in.
  @TaskLocal static var tracking: [SharedChangeTracker] = []
  /// The tracker of the `assert` scope the current task runs in.
  @TaskLocal static var asserting: SharedChangeTracker?

  /// Whether any scope runs now: only then does a mutation ask the task-local values.
  @inlinable static var mayBeActive: Bool { scopes.load(ordering: .relaxed) > 0 }

  /// Runs `body` counted as a running scope.
  static func inScope<R>(_ body: () throws -> R) rethrows -> R {
    scopes.add(1, ordering: .relaxed)
    defer { scopes.subtract(1, ordering: .relaxed) }
    return try body()
  }

  /// The value an `assert` scope shows for `reference`: its snapshot, if the scope's tracker
  /// holds one.
  static func assertedSnapshot<Value: Sendable>(of reference: SharedReference<Value>) -> Value? {
    guard mayBeActive, let tracker = asserting else { return nil }
    return tracker.changes.snapshot(of: reference)
  }
}

/// Where a mutation was written, for the report of a change no assertion covered.
struct MutationSite: Sendable, CustomStringConvertible {
  let fileID: StaticString
  let line: UInt

  var description: String { "\(fileID):\(line)" }
}

extension SharedReference {
  /// `withLock` while a tracker's scope runs: in an `assert` scope the body changes the
  /// snapshot, not the value (nothing is saved); in `track` scopes each tracker keeps the value
  /// from before the mutation.
  func withLockTracked<R, E: Error>(
    at site: MutationSite?, _ body: (inout Value) throws(E) -> R
  ) throws(E) -> R {
    if let tracker = ChangeTracking.asserting {
      // The body is the test's own code: it runs with no lock held.
      var snapshot = tracker.changes.snapshot(of: self) ?? cell.state.withLock { $0.value }
      defer { tracker.changes.record(snapshot, of: self, at: site) }
      return try body(&snapshot)
    }
    let trackers = ChangeTracking.tracking
    defer { if cell.savesMutations { saveAfterMutation() } }
    return try cell.withLock { (value: inout Value) throws(E) -> R in
      for tracker in trackers { tracker.changes.record(value, of: self, at: site) }
      return try body(&value)
    }
  }
}
