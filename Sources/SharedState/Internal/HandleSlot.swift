public import Synchronization

/// What ``SharedReader`` holds: a readable, observable, reloadable value.
protocol ReaderBox<Value>: AnyObject, Sendable {
  associatedtype Value: Sendable
  var value: Value { get }
  var loadError: (any Error)? { get }
  var isLoading: Bool { get }
  func load() async throws
  func values() -> AsyncStream<Value>
  /// The reference as swift-sharing describes it: `value: 0`, `.appStorage("count")`,
  /// `value: User(…)[dynamicMember: \User.name]`.
  var description: String { get }
  /// The reference at the root and the path from it: equal for two handles on the same place.
  var identity: HandleIdentity { get }
}

/// What ``Shared`` holds: a ``ReaderBox`` that can also be mutated and saved.
protocol MutableBox<Value>: ReaderBox {
  var saveError: (any Error)? { get }
  func withLock<R, E: Error>(at site: MutationSite?, _ body: (inout Value) throws(E) -> R) throws(E) -> R
  func save() async throws
}

/// The reference a handle reaches and the way from it to the handle's value.
struct HandleIdentity: Equatable {
  /// The ``SharedReference`` at the root.
  let root: AnyObject
  /// Member key paths and unwrappings, in order; a computed value adds its own box, so it is
  /// only ever the same as itself.
  var path: [AnyHashable] = []

  static func == (lhs: Self, rhs: Self) -> Bool { lhs.root === rhs.root && lhs.path == rhs.path }
}

/// What every copy of one handle shares, as swift-sharing's handles share a box: assigning a
/// handle's projected value, or loading it from another key, moves every copy made before.
///
/// Reading costs one atomic load until the handle first moves. The content it was made with
/// is kept as long as the slot lives, because a copy may still be reading it on another thread
/// while the handle moves.
@usableFromInline
final class HandleSlot<Content: Sendable>: Sendable {
  @usableFromInline let initial: Content
  @usableFromInline let moved = Atomic<Bool>(false)
  private let latest = Mutex<Content?>(nil)

  init(_ content: Content) { initial = content }

  @inlinable var content: Content {
    if _fastPath(!hasMoved) { return initial }
    return movedContent()
  }

  /// Whether a copy was moved to another reference since the handle was made.
  @inlinable var hasMoved: Bool { moved.load(ordering: .acquiring) }

  @usableFromInline func movedContent() -> Content { latest.withLock { $0 } ?? initial }

  /// Points every copy of the handle at `content`.
  func move(to content: Content) {
    let previous = latest.withLock { latest in
      defer { latest = content }
      return latest
    }
    moved.store(true, ordering: .releasing)
    // Released here, with no lock held: it may hold the last handle on a reference.
    _ = previous
  }
}

/// What a ``Shared`` handle points at.
@usableFromInline
struct SharedContent<Value: Sendable>: Sendable {
  let box: any MutableBox<Value>
  /// The box itself when it is a reference (not a member or an unwrapped optional): a
  /// mutation goes straight to its cell.
  let reference: SharedReference<Value>?

  init(_ reference: SharedReference<Value>) {
    box = reference
    self.reference = reference
  }

  init(derived box: any MutableBox<Value>) {
    self.box = box
    reference = nil
  }
}
