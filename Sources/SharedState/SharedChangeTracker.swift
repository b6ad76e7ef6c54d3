import Synchronization

/// Records how shared values change while code runs, so that a test can then state the change
/// it expected: what `ComposableArchitecture`'s `TestStore` uses to assert on shared state.
///
/// Run the code under test inside ``track(_:)``: each mutation records the value its reference
/// had before it. Then, inside ``assert(_:)``, handles read those recorded values (their
/// snapshots) and `withLock` changes the snapshots instead of the values; comparing a handle
/// with itself (`$count == $count`) compares its snapshot with its real value and counts the
/// change as asserted.
///
/// ```swift
/// @Shared(value: 0) var count
/// let tracker = SharedChangeTracker()
/// tracker.track {
///   $count.withLock { $0 += 1 }   // the feature under test
/// }
/// tracker.assert {
///   #expect($count != $count)     // 0 recorded, 1 now
///   $count.withLock { $0 = 1 }    // the change the test expects
///   #expect($count == $count)
/// }
/// ```
///
/// When the tracker is released, every recorded change that no comparison covered is reported
/// through ``SharedEnvironment/reportIssue`` (unless `reportUnassertedChanges` is `false`).
/// A snapshot is the value before the latest mutation made in a `track` scope, as in
/// swift-sharing. Scopes follow the task, like task-local values: a task started inside one is
/// tracked while the scope runs.
public struct SharedChangeTracker: Hashable, Sendable {
  let changes: TrackedChanges

  /// Creates a tracker with nothing recorded.
  ///
  /// - Parameter reportUnassertedChanges: Whether changes no assertion covered are reported
  ///   when the tracker is released (`true` by default).
  public init(reportUnassertedChanges: Bool = true) {
    changes = TrackedChanges(
      reportUnassertedChanges: reportUnassertedChanges, reportIssue: SharedEnvironment.current.reportIssue)
  }

  /// Whether any change was recorded since the tracker was made or last reset.
  public var hasChanges: Bool { changes.hasChanges }

  /// Runs `body`, recording the changes its mutations make.
  public func track<R>(_ body: () throws -> R) rethrows -> R {
    try ChangeTracking.inScope {
      try ChangeTracking.$tracking.withValue(ChangeTracking.tracking + [self], operation: body)
    }
  }

  /// Runs `body` with handles showing the recorded values: `withLock` changes those, and a
  /// handle compared with itself compares them with the real values.
  public func assert<R>(_ body: () throws -> R) rethrows -> R {
    try ChangeTracking.inScope {
      try ChangeTracking.$asserting.withValue(self, operation: body)
    }
  }

  /// Forgets every recorded change.
  public func reset() { changes.reset() }

  /// Two trackers are equal when they are copies of one tracker.
  public static func == (lhs: Self, rhs: Self) -> Bool { lhs.changes === rhs.changes }

  /// Hashes the tracker's identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(changes)) }
}

/// The changes a ``SharedChangeTracker`` recorded, by reference; it reports those no assertion
/// covered when it goes.
final class TrackedChanges: Sendable {
  private let changes = Mutex<[ObjectIdentifier: any TrackedChange]>([:])
  private let reportUnassertedChanges: Bool
  private let reportIssue: @Sendable (String) -> Void

  init(reportUnassertedChanges: Bool, reportIssue: @escaping @Sendable (String) -> Void) {
    self.reportUnassertedChanges = reportUnassertedChanges
    self.reportIssue = reportIssue
  }

  deinit {
    guard reportUnassertedChanges else { return }
    let unasserted = changes.withLock { $0.values.filter { !$0.isAsserted } }
    for change in unasserted { reportIssue(change.unassertedMessage) }
  }

  var hasChanges: Bool { changes.withLock { !$0.isEmpty } }

  func snapshot<Value: Sendable>(of reference: SharedReference<Value>) -> Value? {
    changes.withLock { ($0[ObjectIdentifier(reference)] as? Change<Value>)?.snapshot }
  }

  /// Keeps `snapshot` as the value `reference` is compared with; a change already recorded
  /// keeps where it was first made and whether it was asserted.
  func record<Value: Sendable>(_ snapshot: Value, of reference: SharedReference<Value>, at site: MutationSite?) {
    changes.withLock { changes in
      let key = ObjectIdentifier(reference)
      var change = changes[key] as? Change<Value> ?? Change(reference: reference, snapshot: snapshot, site: site)
      change.snapshot = snapshot
      changes[key] = change
    }
  }

  /// Counts the change of `reference` as asserted.
  func markAsserted(_ reference: AnyObject) {
    changes.withLock { $0[ObjectIdentifier(reference)]?.isAsserted = true }
  }

  func reset() {
    let removed = changes.withLock { changes in
      defer { changes = [:] }
      return changes
    }
    _ = removed
  }
}

/// One reference's recorded change.
protocol TrackedChange: Sendable {
  var isAsserted: Bool { get set }
  var unassertedMessage: String { get }
}

private struct Change<Value: Sendable>: TrackedChange {
  let reference: SharedReference<Value>
  var snapshot: Value
  let site: MutationSite?
  var isAsserted = false

  var unassertedMessage: String {
    let handle = "Shared<\(displayName(of: Value.self))>(\(reference.description))"
    let now = reference.cell.state.withLock { $0.value }
    let place = site.map { " at \($0)" } ?? ""
    return "A SharedChangeTracker was released with a change no assertion covered: \(handle) went from "
      + "\(String(reflecting: snapshot)) to \(String(reflecting: now))\(place). State the change inside "
      + "`tracker.assert { … }` and compare the handle with itself, or make the tracker with "
      + "reportUnassertedChanges: false."
  }
}
