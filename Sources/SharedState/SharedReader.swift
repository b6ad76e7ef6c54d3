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
///
/// Like a ``Shared``, copies of a reader are one handle: assigning to the projected value or
/// ``load(_:)-(SharedReaderKey<Value>)`` from another key moves every copy.
@propertyWrapper
@dynamicMemberLookup
public struct SharedReader<Value: Sendable>: Sendable {
  let slot: HandleSlot<any ReaderBox<Value>>

  var box: any ReaderBox<Value> { slot.content }

  init(box: any ReaderBox<Value>) { slot = HandleSlot(box) }

  /// A read-only view of `shared`, following its changes (and staying with its reference if
  /// `shared` is later moved).
  public init(_ shared: Shared<Value>) {
    self.init(box: shared.box)
  }

  /// The non-optional view of an optional shared value; nil when it holds nothing now.
  public init?(_ base: Shared<Value?>) {
    guard let unwrapped = UnwrappedReaderBox(root: base.box) else { return nil }
    self.init(box: unwrapped)
  }

  /// The non-optional view of an optional reader; nil when it holds nothing now.
  public init?(_ base: SharedReader<Value?>) {
    guard let unwrapped = UnwrappedReaderBox(root: base.box) else { return nil }
    self.init(box: unwrapped)
  }

  /// A constant value shared by reference.
  public init(value: Value) {
    self.init(box: SharedReference(value: value))
  }

  /// A constant value shared by reference.
  @available(*, deprecated, renamed: "init(value:)")
  public static func constant(_ value: Value) -> Self { Self(value: value) }

  /// Reads the optional value stored by `key`: nil while nothing is stored.
  @_disfavoredOverload
  public init<Wrapped>(_ key: some SharedReaderKey<Value>) where Value == Wrapped? {
    self.init(wrappedValue: nil, key)
  }

  /// Reads the value stored by `key`, using `wrappedValue` while nothing is stored.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedReaderKey<Value>) {
    self.init(box: ReferenceRegistry.shared.reference(for: key, initialValue: wrappedValue))
  }

  /// Reads the value stored by a named key that carries its own default.
  public init<Key: SharedReaderKey<Value>>(_ key: SharedKeyDefault<Key>) {
    self.init(wrappedValue: key.defaultValue(), key.base)
  }

  /// Reads the value stored by a named key, with `wrappedValue` in place of its default.
  public init<Key: SharedReaderKey<Value>>(wrappedValue: @autoclosure () -> Value, _ key: SharedKeyDefault<Key>) {
    self.init(wrappedValue: wrappedValue(), key.base)
  }

  /// Reads the value stored by `key`, which must exist.
  ///
  /// - Throws: ``SharedStateError/valueNotFound(_:)`` when nothing is stored, or the key's
  ///   load error.
  public init(require key: some SharedReaderKey<Value>) async throws {
    self.init(box: try await ReferenceRegistry.shared.requiredReference(for: key))
  }

  /// Another handle on the same reference.
  public init(projectedValue: SharedReader<Value>) {
    self = projectedValue
  }

  /// The current value.
  public var wrappedValue: Value { box.value }

  /// The handle itself, for `$x.load()`, `$x.loadError` and `$x.member`. Assigning to it moves
  /// this handle and every copy of it to the assigned handle's reference.
  public var projectedValue: SharedReader<Value> {
    get { self }
    nonmutating set {
      let previous = box
      slot.move(to: newValue.box)
      tellObservers(of: previous)
    }
  }

  /// A read-only handle on one member of the value.
  public subscript<Member: Sendable>(
    dynamicMember keyPath: any KeyPath<Value, Member> & Sendable
  ) -> SharedReader<Member> {
    SharedReader<Member>(box: MemberReaderBox(root: box, keyPath: keyPath))
  }

  /// A read-only handle on a value computed from this one, following its changes.
  public func read<Member: Sendable>(_ body: @escaping @Sendable (Value) -> Member) -> SharedReader<Member> {
    SharedReader<Member>(box: ComputedReaderBox(root: box, transform: body))
  }

  /// A read-only handle on a member.
  @available(*, deprecated, message: "Use dynamic member lookup instead: '$value.member'.")
  public func read<Member: Sendable>(_ keyPath: any KeyPath<Value, Member> & Sendable) -> SharedReader<Member> {
    self[dynamicMember: keyPath]
  }

  /// Reloads the value from its key. When nothing is stored, the value is kept. The result is
  /// applied when this returns.
  public func load() async throws { try await box.load() }

  /// Points this handle, and every copy of it, at `key`, starting from the current value (or
  /// from the value of a handle that already has that key), then loads from it.
  public func load(_ key: some SharedReaderKey<Value>) async throws { try await move(to: key) }

  /// Points this handle at `key` and loads from it (the writable key is read only).
  @_disfavoredOverload
  public func load(_ key: some SharedKey<Value>) async throws { try await move(to: key) }

  private func move(to key: some SharedReaderKey<Value>) async throws {
    let reference = ReferenceRegistry.shared.reference(for: key, initialValue: { wrappedValue }, skipInitialLoad: true)
    projectedValue = SharedReader(box: reference)
    try await reference.load()
  }

  /// The last load error, until a later load succeeds.
  public var loadError: (any Error)? { box.loadError }

  /// Whether a load is running, or the key said it is loading.
  public var isLoading: Bool { box.isLoading }

  /// The current value, then every later one (latest wins when the consumer is slow).
  public var values: AsyncStream<Value> { box.values() }
}

extension SharedReader: CustomStringConvertible {
  /// The handle as swift-sharing writes it: `SharedReader<Int>(value: 0)`.
  public var description: String { describeHandle(Self.self, box) }
}

extension SharedReader: CustomReflectable {
  /// The value's own mirror, so `dump` and debuggers show the value, not the handle's machinery.
  public var customMirror: Mirror { Mirror(reflecting: wrappedValue) }
}

extension SharedReader: Equatable where Value: Equatable {
  /// Two handles are equal when their values are (see ``Shared``'s `==` for change tracking).
  public static func == (lhs: Self, rhs: Self) -> Bool { handlesAreEqual(lhs.box, rhs.box) }
}

extension SharedReader: Identifiable where Value: Identifiable {
  /// The value's id.
  public var id: Value.ID { wrappedValue.id }
}
