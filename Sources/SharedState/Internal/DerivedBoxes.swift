import Synchronization

// Handles derived from another handle: one member of its value, its unwrapped optional, or a
// value computed from it.

/// A handle on one member of another handle's value (`$user.name`).
final class ProjectedBox<Root: Sendable, Value: Sendable>: MutableBox {
  let root: any MutableBox<Root>
  let keyPath: any WritableKeyPath<Root, Value> & Sendable

  init(root: any MutableBox<Root>, keyPath: any WritableKeyPath<Root, Value> & Sendable) {
    self.root = root
    self.keyPath = keyPath
  }

  var value: Value { root.value[keyPath: keyPath] }
  var loadError: (any Error)? { root.loadError }
  var saveError: (any Error)? { root.saveError }
  var isLoading: Bool { root.isLoading }
  func load() async throws { try await root.load() }
  func save() async throws { try await root.save() }
  func values() -> AsyncStream<Value> {
    let keyPath = keyPath
    return mapValues(root.values()) { $0[keyPath: keyPath] }
  }

  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    let keyPath = keyPath
    return try root.withLock { (rootValue: inout Root) throws(E) -> R in
      try body(&rootValue[keyPath: keyPath])
    }
  }
}

/// A read-only handle on one member of another handle's value.
final class ProjectedReaderBox<Root: Sendable, Value: Sendable>: ReaderBox {
  let root: any ReaderBox<Root>
  let keyPath: any KeyPath<Root, Value> & Sendable

  init(root: any ReaderBox<Root>, keyPath: any KeyPath<Root, Value> & Sendable) {
    self.root = root
    self.keyPath = keyPath
  }

  var value: Value { root.value[keyPath: keyPath] }
  var loadError: (any Error)? { root.loadError }
  var isLoading: Bool { root.isLoading }
  func load() async throws { try await root.load() }
  func values() -> AsyncStream<Value> {
    let keyPath = keyPath
    return mapValues(root.values()) { $0[keyPath: keyPath] }
  }
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

/// The non-optional view of an optional handle (`Shared($user)` where `$user` holds `User?`):
/// it reads the wrapped value, or the last one it had once the optional becomes nil, and writes
/// through to the optional.
final class UnwrappedBox<Value: Sendable>: MutableBox {
  let root: any MutableBox<Value?>
  private let last: Mutex<Value>

  /// Nil when the optional holds nothing now.
  init?(root: any MutableBox<Value?>) {
    guard let current = root.value else { return nil }
    self.root = root
    last = Mutex(current)
  }

  var value: Value {
    if let current = root.value {
      last.withLock { $0 = current }
      return current
    }
    return last.withLock { $0 }
  }
  var loadError: (any Error)? { root.loadError }
  var saveError: (any Error)? { root.saveError }
  var isLoading: Bool { root.isLoading }
  func load() async throws { try await root.load() }
  func save() async throws { try await root.save() }

  func values() -> AsyncStream<Value> {
    let fallback = self
    return mapValues(root.values()) { $0 ?? fallback.last.withLock { $0 } }
  }

  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try root.withLock { (optional: inout Value?) throws(E) -> R in
      var unwrapped = optional ?? last.withLock { $0 }
      defer {
        optional = unwrapped
        last.withLock { $0 = unwrapped }
      }
      return try body(&unwrapped)
    }
  }
}

/// The read-only view of an optional reader, unwrapped as ``UnwrappedBox`` does.
final class UnwrappedReaderBox<Value: Sendable>: ReaderBox {
  let root: any ReaderBox<Value?>
  private let last: Mutex<Value>

  init?(root: any ReaderBox<Value?>) {
    guard let current = root.value else { return nil }
    self.root = root
    last = Mutex(current)
  }

  var value: Value {
    if let current = root.value {
      last.withLock { $0 = current }
      return current
    }
    return last.withLock { $0 }
  }
  var loadError: (any Error)? { root.loadError }
  var isLoading: Bool { root.isLoading }
  func load() async throws { try await root.load() }

  func values() -> AsyncStream<Value> {
    let fallback = self
    return mapValues(root.values()) { $0 ?? fallback.last.withLock { $0 } }
  }
}

/// A value computed from another handle's value (`$user.read { $0.name.count }`).
final class ComputedReaderBox<Root: Sendable, Value: Sendable>: ReaderBox {
  let root: any ReaderBox<Root>
  let transform: @Sendable (Root) -> Value

  init(root: any ReaderBox<Root>, transform: @escaping @Sendable (Root) -> Value) {
    self.root = root
    self.transform = transform
  }

  var value: Value { transform(root.value) }
  var loadError: (any Error)? { root.loadError }
  var isLoading: Bool { root.isLoading }
  func load() async throws { try await root.load() }
  func values() -> AsyncStream<Value> { mapValues(root.values(), transform) }
}
