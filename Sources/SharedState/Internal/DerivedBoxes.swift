import Synchronization

// Handles derived from another handle: one member of its value, its unwrapped optional, or a
// value computed from it. Each kind says only how its value comes from the root's (and, if it
// writes, how a change goes back); reading, observing, loading and saving go through the root,
// written once in the two protocols below.

/// A box whose value is derived from its root's.
protocol DerivedBox<Value>: ReaderBox {
  associatedtype Root: Sendable
  var root: any ReaderBox<Root> { get }
  /// This box's value, given the root's.
  func derive(_ root: Root) -> Value
  /// What this box adds to the root's description and identity.
  var step: DerivationStep { get }
}

/// How a derived box is described and told apart from others on the same root.
struct DerivationStep {
  /// The root's description, with this box's part around it.
  let describe: (String) -> String
  /// Equal for two boxes that reach the same place.
  let identity: AnyHashable
}

extension DerivedBox {
  var value: Value { derive(root.value) }
  var loadError: (any Error)? { root.loadError }
  var isLoading: Bool { root.isLoading }
  func load() async throws { try await root.load() }
  func values() -> AsyncStream<Value> { mapValues(root.values()) { [self] in derive($0) } }
  var description: String { step.describe(root.description) }

  var identity: HandleIdentity {
    var identity = root.identity
    identity.path.append(step.identity)
    return identity
  }
}

/// A derived box that writes through to its root.
protocol WritableDerivedBox<Value>: DerivedBox, MutableBox {
  var writableRoot: any MutableBox<Root> { get }
  /// Runs `body` on this box's part of the root's value.
  func write<R, E: Error>(_ body: (inout Value) throws(E) -> R, into root: inout Root) throws(E) -> R
}

extension WritableDerivedBox {
  var root: any ReaderBox<Root> { writableRoot }
  var saveError: (any Error)? { writableRoot.saveError }
  func save() async throws { try await writableRoot.save() }

  func withLock<R, E: Error>(at site: MutationSite?, _ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try writableRoot.withLock(at: site) { (rootValue: inout Root) throws(E) -> R in
      try write(body, into: &rootValue)
    }
  }
}

/// A handle on one member of another handle's value (`$user.name`).
final class MemberBox<Root: Sendable, Value: Sendable>: WritableDerivedBox {
  let writableRoot: any MutableBox<Root>
  let keyPath: any WritableKeyPath<Root, Value> & Sendable

  init(root: any MutableBox<Root>, keyPath: any WritableKeyPath<Root, Value> & Sendable) {
    writableRoot = root
    self.keyPath = keyPath
  }

  func derive(_ root: Root) -> Value { root[keyPath: keyPath] }
  var step: DerivationStep { .member(keyPath) }

  func write<R, E: Error>(_ body: (inout Value) throws(E) -> R, into root: inout Root) throws(E) -> R {
    try body(&root[keyPath: keyPath])
  }
}

/// A read-only handle on one member of another handle's value.
final class MemberReaderBox<Root: Sendable, Value: Sendable>: DerivedBox {
  let root: any ReaderBox<Root>
  let keyPath: any KeyPath<Root, Value> & Sendable

  init(root: any ReaderBox<Root>, keyPath: any KeyPath<Root, Value> & Sendable) {
    self.root = root
    self.keyPath = keyPath
  }

  func derive(_ root: Root) -> Value { root[keyPath: keyPath] }
  var step: DerivationStep { .member(keyPath) }
}

/// The non-optional view of an optional handle (`Shared($user)` where `$user` holds `User?`):
/// it reads the wrapped value, or the last one it had once the optional becomes nil, and writes
/// through to the optional.
final class UnwrappedBox<Value: Sendable>: WritableDerivedBox {
  let writableRoot: any MutableBox<Value?>
  private let last: LastValue<Value>

  /// Nil when the optional holds nothing now.
  init?(root: any MutableBox<Value?>) {
    guard let last = LastValue(root.value) else { return nil }
    writableRoot = root
    self.last = last
  }

  func derive(_ root: Value?) -> Value { last.reading(root) }
  var step: DerivationStep { .unwrapped }

  func write<R, E: Error>(_ body: (inout Value) throws(E) -> R, into root: inout Value?) throws(E) -> R {
    var unwrapped = last.reading(root)
    defer {
      root = unwrapped
      last.keep(unwrapped)
    }
    return try body(&unwrapped)
  }
}

/// The read-only view of an optional reader, unwrapped as ``UnwrappedBox`` does.
final class UnwrappedReaderBox<Value: Sendable>: DerivedBox {
  let root: any ReaderBox<Value?>
  private let last: LastValue<Value>

  init?(root: any ReaderBox<Value?>) {
    guard let last = LastValue(root.value) else { return nil }
    self.root = root
    self.last = last
  }

  func derive(_ root: Value?) -> Value { last.reading(root) }
  var step: DerivationStep { .unwrapped }
}

/// A value computed from another handle's value (`$user.read { $0.name.count }`).
final class ComputedReaderBox<Root: Sendable, Value: Sendable>: DerivedBox {
  let root: any ReaderBox<Root>
  let transform: @Sendable (Root) -> Value

  init(root: any ReaderBox<Root>, transform: @escaping @Sendable (Root) -> Value) {
    self.root = root
    self.transform = transform
  }

  func derive(_ root: Root) -> Value { transform(root) }
  /// A closure has no identity to compare: only this box reaches the same place.
  var step: DerivationStep {
    DerivationStep(
      describe: { ".map(\($0), as: \(displayName(of: Value.self)).self)" }, identity: ObjectIdentifier(self))
  }
}

extension DerivationStep {
  static func member<Root, Value>(_ keyPath: any KeyPath<Root, Value> & Sendable) -> Self {
    DerivationStep(describe: { "\($0)[dynamicMember: \(keyPath)]" }, identity: AnyHashable(keyPath))
  }

  /// Unwrapping an optional (`Shared($user)`).
  static var unwrapped: Self { DerivationStep(describe: { "\($0)!" }, identity: AnyHashable("!")) }
}

/// The last value an optional held, shown once it holds nothing.
private final class LastValue<Value: Sendable>: Sendable {
  private let value: Mutex<Value>

  init?(_ current: Value?) {
    guard let current else { return nil }
    value = Mutex(current)
  }

  func reading(_ optional: Value?) -> Value {
    guard let optional else { return value.withLock { $0 } }
    keep(optional)
    return optional
  }

  func keep(_ newValue: Value) { value.withLock { $0 = newValue } }
}

/// A stream of `transform` of each value of `stream`, latest wins.
private func mapValues<Root: Sendable, Value: Sendable>(
  _ stream: AsyncStream<Root>, _ transform: @escaping @Sendable (Root) -> Value
) -> AsyncStream<Value> {
  AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
    let task = Task {
      for await value in stream { continuation.yield(transform(value)) }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
  }
}
