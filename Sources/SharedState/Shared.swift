/// A value shared by reference between features, optionally persisted by a ``SharedKey``.
///
/// Read it plainly; change it only through ``withLock(_:)``, which runs a whole
/// read-modify-write atomically and then asks the key to save (``SaveContext/didSet``).
///
/// ```swift
/// @Shared(.inMemory("favourites")) var favourites: Set<Int> = []
///
/// $favourites.withLock { favourites in
///   if favourites.contains(id) { favourites.remove(id) } else { favourites.insert(id) }
/// }
/// try await $favourites.save()   // written now (.userInitiated)
/// ```
///
/// Handles whose keys have the same type and equal `id` share one reference; the first
/// handle's default wins. `Shared(value:)` shares by reference without a key. Give a feature
/// that must not write a ``SharedReader`` instead: `SharedReader($favourites)`.
///
/// Changes are observable through `Observation` (`withObservationTracking`) and through
/// ``values``, an `AsyncStream` of the value.
@propertyWrapper
@dynamicMemberLookup
public struct Shared<Value: Sendable>: Sendable {
  let box: any MutableBox<Value>

  init(box: any MutableBox<Value>) { self.box = box }

  /// Shares `value` by reference, without a key: copies of this handle see the same value.
  public init(value: Value) {
    box = SharedReference(value: value)
  }

  /// Shares the value stored by `key`, using `wrappedValue` while nothing is stored.
  ///
  /// - Parameters:
  ///   - wrappedValue: The default; ignored if a handle with an equal key already exists.
  ///   - key: Where the value lives.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedKey<Value>) {
    box = ReferenceRegistry.shared.reference(for: key, initialValue: wrappedValue)
  }

  /// Shares the value stored by a named key that carries its own default.
  public init<Key: SharedKey<Value>>(_ key: SharedKeyDefault<Key>) {
    self.init(wrappedValue: key.defaultValue(), key.base)
  }

  /// Shares the value stored by `key`, which must exist.
  ///
  /// - Throws: ``SharedStateError/valueNotFound(_:)`` when nothing is stored, or the key's
  ///   load error.
  public init(require key: some SharedKey<Value>) async throws {
    box = try await ReferenceRegistry.shared.requiredReference(for: key)
  }

  /// Another handle on the same reference (`_x = Shared(projectedValue: $y)`).
  public init(projectedValue: Shared<Value>) {
    self = projectedValue
  }

  /// The current value.
  public var wrappedValue: Value { box.value }

  /// The handle itself, for `$x.withLock { … }`, `$x.save()` and `$x.member`.
  public var projectedValue: Shared<Value> {
    get { self }
    set { self = newValue }
  }

  /// A handle on one member of the value, sharing the same reference.
  public subscript<Member: Sendable>(
    dynamicMember keyPath: any WritableKeyPath<Value, Member> & Sendable
  ) -> Shared<Member> {
    Shared<Member>(box: ProjectedBox(root: box, keyPath: keyPath))
  }

  /// Runs a read-modify-write of the value atomically, then saves it (`.didSet`) outside the
  /// lock. If another thread is handing a value to the key at that moment, this call returns
  /// at once and that thread saves this value after its own.
  ///
  /// - Parameter body: Mutates the value in place. Do not touch this same handle inside it.
  /// - Returns: What `body` returns.
  public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try box.withLock(body)
  }

  /// Reloads the value from its key (`.userInitiated`).
  ///
  /// - Throws: The key's load error, also kept in ``loadError``.
  public func load() async throws { try await box.load() }

  /// Saves the value now (`.userInitiated`); it is stored when this returns.
  ///
  /// - Throws: The key's save error, also kept in ``saveError``.
  public func save() async throws { try await box.save() }

  /// The last load error, until a later load succeeds.
  public var loadError: (any Error)? { box.loadError }

  /// The last save error, until a later save succeeds.
  public var saveError: (any Error)? { box.saveError }

  /// Whether a load is running.
  public var isLoading: Bool { box.isLoading }

  /// The current value, then every later one (intermediate values may be skipped when the
  /// consumer is slower than the changes: the latest value always arrives). Iterating keeps
  /// the value alive.
  public var values: AsyncStream<Value> { box.values() }
}

extension Shared: CustomStringConvertible {
  public var description: String { "Shared(\(wrappedValue))" }
}
