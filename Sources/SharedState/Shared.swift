/// A value shared by reference between features, optionally persisted by a ``SharedKey``.
///
/// Read it plainly; change it only through ``withLock(_:fileID:filePath:line:column:)``, which
/// runs a whole read-modify-write atomically and then asks the key to save
/// (``SaveContext/didSet``).
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
/// Copies of a handle are one handle, as in swift-sharing: assigning to the projected value
/// (`$favourites = Shared(value: [])`) or ``load(_:)`` from another key moves every copy.
/// Handles derived before that (`$user.name`, `SharedReader($user)`) stay where they were.
///
/// Changes are observable through `Observation` (`withObservationTracking`) and through
/// ``values``, an `AsyncStream` of the value.
@propertyWrapper
@dynamicMemberLookup
public struct Shared<Value: Sendable>: Sendable {
  @usableFromInline let slot: HandleSlot<SharedContent<Value>>
  /// The value cell of the reference the handle was made with (nil for a member or an
  /// unwrapped optional), kept beside the slot: until the handle moves, `withLock` reaches it
  /// without retaining the reference, which the registry holds weakly (a weakly held object is
  /// retained and released through a side table, at a multiple of the cost of a mutation).
  @usableFromInline let cell: ValueCell<Value>?

  var box: any MutableBox<Value> { slot.content.box }

  init(reference: SharedReference<Value>) {
    slot = HandleSlot(SharedContent(reference))
    cell = reference.cell
  }

  init(box: any MutableBox<Value>) {
    slot = HandleSlot(SharedContent(derived: box))
    cell = nil
  }

  /// Shares `value` by reference, without a key: copies of this handle see the same value.
  public init(value: Value) {
    self.init(reference: SharedReference(value: value))
  }

  /// The non-optional view of an optional shared value; nil when it holds nothing now.
  ///
  /// The view reads and writes through to `base`; if `base` later becomes nil, the view keeps
  /// the last value it had.
  ///
  /// ```swift
  /// @Shared(.currentUser) var user: User?
  /// if let user = Shared($user) {
  ///   user.withLock { $0.name = "Blob" }   // writes through to the optional
  /// }
  /// ```
  public init?(_ base: Shared<Value?>) {
    guard let unwrapped = UnwrappedBox(root: base.box) else { return nil }
    self.init(box: unwrapped)
  }

  /// Shares the value stored by `key`, using `wrappedValue` while nothing is stored.
  ///
  /// - Parameters:
  ///   - wrappedValue: The default; ignored if a handle with an equal key already exists.
  ///   - key: Where the value lives.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedKey<Value>) {
    self.init(reference: ReferenceRegistry.shared.reference(for: key, initialValue: wrappedValue))
  }

  /// Shares the optional value stored by `key`: nil while nothing is stored.
  @_disfavoredOverload
  public init<Wrapped>(_ key: some SharedKey<Value>) where Value == Wrapped? {
    self.init(wrappedValue: nil, key)
  }

  /// Shares the value stored by a named key that carries its own default.
  public init<Key: SharedKey<Value>>(_ key: SharedKeyDefault<Key>) {
    self.init(wrappedValue: key.defaultValue(), key.base)
  }

  /// Shares the value stored by a named key, with `wrappedValue` in place of its default.
  public init<Key: SharedKey<Value>>(wrappedValue: @autoclosure () -> Value, _ key: SharedKeyDefault<Key>) {
    self.init(wrappedValue: wrappedValue(), key.base)
  }

  /// Shares the value stored by `key`, which must exist.
  ///
  /// - Throws: ``SharedStateError/valueNotFound(_:)`` when nothing is stored, or the key's
  ///   load error.
  public init(require key: some SharedKey<Value>) async throws {
    self.init(reference: try await ReferenceRegistry.shared.requiredReference(for: key))
  }

  /// Another handle on the same reference (`_x = Shared(projectedValue: $y)`).
  public init(projectedValue: Shared<Value>) {
    self = projectedValue
  }

  /// The current value.
  public var wrappedValue: Value {
    get { box.value }
    @available(*, deprecated, message: "Use '$shared.withLock' to modify a shared value with exclusive access.")
    nonmutating set { box.withLock(at: nil) { $0 = newValue } }
  }

  /// The handle itself, for `$x.withLock { … }`, `$x.save()` and `$x.member`. Assigning to it
  /// moves this handle and every copy of it to the assigned handle's reference.
  public var projectedValue: Shared<Value> {
    get { self }
    nonmutating set {
      let previous = box
      slot.move(to: newValue.slot.content)
      tellObservers(of: previous)
    }
  }

  /// A handle on one member of the value, sharing the same reference.
  public subscript<Member: Sendable>(
    dynamicMember keyPath: any WritableKeyPath<Value, Member> & Sendable
  ) -> Shared<Member> {
    Shared<Member>(box: MemberBox(root: box, keyPath: keyPath))
  }

  /// A read-only handle on a member that cannot be written (`$topics.count`).
  public subscript<Member: Sendable>(
    dynamicMember keyPath: any KeyPath<Value, Member> & Sendable
  ) -> SharedReader<Member> {
    SharedReader(self)[dynamicMember: keyPath]
  }

  /// A read-only handle on a value computed from this one, following its changes.
  ///
  /// ```swift
  /// let count = $topics.read { $0.count }
  /// ```
  public func read<Member: Sendable>(_ body: @escaping @Sendable (Value) -> Member) -> SharedReader<Member> {
    SharedReader(self).read(body)
  }

  /// A read-only handle on a member.
  @available(*, deprecated, message: "Use dynamic member lookup instead: '$value.member'.")
  public func read<Member: Sendable>(_ keyPath: any KeyPath<Value, Member> & Sendable) -> SharedReader<Member> {
    SharedReader(self)[dynamicMember: keyPath]
  }

  /// Runs a read-modify-write of the value atomically, then saves it (`.didSet`) outside the
  /// lock. If another thread is handing a value to the key at that moment, this call returns
  /// at once and that thread saves this value after its own.
  ///
  /// - Parameters:
  ///   - body: Mutates the value in place. Do not touch this same handle inside it.
  ///   - fileID: Where the mutation is written, for a ``SharedChangeTracker``'s report.
  ///   - filePath: Accepted for swift-sharing's signature; unused.
  ///   - line: Where the mutation is written, for a ``SharedChangeTracker``'s report.
  ///   - column: Accepted for swift-sharing's signature; unused.
  /// - Returns: What `body` returns.
  @inlinable
  public func withLock<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) throws(E) -> R {
    guard let cell, !slot.hasMoved, !ChangeTracking.mayBeActive else {
      return try withLockThroughBox(body, fileID: fileID, line: line)
    }
    defer { if cell.savesMutations { saveAfterMutation() } }
    return try cell.withLock(body)
  }

  /// Hands a mutation made through the cell to the key (`.didSet`), after the observers' `didSet`.
  /// Only keys that save come here, so retaining the reference is not on the path of `.inMemory`
  /// values.
  @usableFromInline
  func saveAfterMutation() {
    slot.content.reference?.saveAfterMutation()
  }

  /// A mutation of a member, an unwrapped optional (its box mutates its root's value) or a
  /// handle that moved, or one a ``SharedChangeTracker`` records.
  @usableFromInline
  func withLockThroughBox<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString, line: UInt
  ) throws(E) -> R {
    try box.withLock(at: MutationSite(fileID: fileID, line: line), body)
  }

  /// Reloads the value from its key (`.userInitiated`). When nothing is stored, the value is
  /// kept. The result is applied when this returns.
  ///
  /// - Throws: The key's load error, also kept in ``loadError``.
  public func load() async throws { try await box.load() }

  /// Points this handle, and every copy of it, at `key`, starting from the current value (or
  /// from the value of a handle that already has that key), then loads from it. Handles derived
  /// before stay with the previous reference.
  ///
  /// - Throws: The key's load error, also kept in ``loadError``.
  public func load(_ key: some SharedKey<Value>) async throws {
    let reference = ReferenceRegistry.shared.reference(for: key, initialValue: { wrappedValue }, skipInitialLoad: true)
    projectedValue = Shared(reference: reference)
    try await reference.load()
  }

  /// Saves the value now (`.userInitiated`); it is stored when this returns.
  ///
  /// - Throws: The key's save error, also kept in ``saveError``.
  public func save() async throws { try await box.save() }

  /// The last load error, until a later load or save succeeds.
  public var loadError: (any Error)? { box.loadError }

  /// The last save error, until a later save succeeds.
  public var saveError: (any Error)? { box.saveError }

  /// Whether a load is running, or the key said it is loading.
  public var isLoading: Bool { box.isLoading }

  /// The current value, then every later one (intermediate values may be skipped when the
  /// consumer is slower than the changes: the latest value always arrives). Iterating keeps
  /// the value alive.
  public var values: AsyncStream<Value> { box.values() }
}

extension Shared: CustomStringConvertible {
  /// The handle as swift-sharing writes it: `Shared<Int>(value: 0)`,
  /// `Shared<Int>(.appStorage("count"))`.
  public var description: String { describeHandle(Self.self, box) }
}

extension Shared: CustomReflectable {
  /// The value's own mirror, so `dump` and debuggers show the value, not the handle's machinery.
  public var customMirror: Mirror { Mirror(reflecting: wrappedValue) }
}

extension Shared: Equatable where Value: Equatable {
  /// Two handles are equal when their values are. Inside a ``SharedChangeTracker``'s `assert`
  /// scope, a handle compared with one on the same place compares its snapshot with the real
  /// value.
  public static func == (lhs: Self, rhs: Self) -> Bool { handlesAreEqual(lhs.box, rhs.box) }
}

extension Shared: Identifiable where Value: Identifiable {
  /// The value's id.
  public var id: Value.ID { wrappedValue.id }
}
