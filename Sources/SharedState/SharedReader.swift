/// A read-only handle on a shared value.
///
/// It reads and observes exactly like ``Shared`` but cannot write: there is no `withLock`,
/// no `save()`, and no API that turns it back into a ``Shared``. A reader is made from a key
/// (data the program consumes but does not own) or from a ``Shared`` (a capability handed
/// down by the owner).
///
/// ```swift
/// struct Header {
///   @SharedReader var user: User
/// }
/// let header = Header(user: SharedReader($user))   // one way only
/// ```
@propertyWrapper
@dynamicMemberLookup
public struct SharedReader<Value: Sendable>: Sendable {
  let box: any ReaderBox<Value>

  init(box: any ReaderBox<Value>) { self.box = box }

  /// A read-only view of `shared`, following its changes.
  public init(_ shared: Shared<Value>) {
    box = shared.box
  }

  /// A constant value shared by reference.
  public init(value: Value) {
    box = SharedReference(value: value)
  }

  /// Reads the value stored by `key`, using `wrappedValue` while nothing is stored.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedReaderKey<Value>) {
    box = ReferenceRegistry.shared.reference(for: key, initialValue: wrappedValue)
  }

  /// Reads the value stored by a named key that carries its own default.
  public init<Key: SharedReaderKey<Value>>(_ key: SharedKeyDefault<Key>) {
    self.init(wrappedValue: key.defaultValue(), key.base)
  }

  /// Reads the value stored by `key`, which must exist.
  ///
  /// - Throws: ``SharedStateError/valueNotFound(_:)`` when nothing is stored, or the key's
  ///   load error.
  public init(require key: some SharedReaderKey<Value>) async throws {
    box = try await ReferenceRegistry.shared.requiredReference(for: key)
  }

  /// Another handle on the same reference.
  public init(projectedValue: SharedReader<Value>) {
    self = projectedValue
  }

  /// The current value.
  public var wrappedValue: Value { box.value }

  /// The handle itself, for `$x.load()`, `$x.loadError` and `$x.member`.
  public var projectedValue: SharedReader<Value> {
    get { self }
    set { self = newValue }
  }

  /// A read-only handle on one member of the value.
  public subscript<Member: Sendable>(
    dynamicMember keyPath: any KeyPath<Value, Member> & Sendable
  ) -> SharedReader<Member> {
    SharedReader<Member>(box: ProjectedReaderBox(root: box, keyPath: keyPath))
  }

  /// Reloads the value from its key.
  public func load() async throws { try await box.load() }

  /// The last load error, until a later load succeeds.
  public var loadError: (any Error)? { box.loadError }

  /// Whether a load is running.
  public var isLoading: Bool { box.isLoading }

  /// The current value, then every later one (latest wins when the consumer is slow).
  public var values: AsyncStream<Value> { box.values() }
}

extension SharedReader: CustomStringConvertible {
  public var description: String { "SharedReader(\(wrappedValue))" }
}
