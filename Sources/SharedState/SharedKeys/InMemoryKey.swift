import Synchronization

extension SharedReaderKey {
  /// A value shared by name for the lifetime of the process, never written anywhere.
  ///
  /// Use it for state several parts of a program must see at once and that must not outlive
  /// the process (a decrypted session token, a download in progress). No `Codable` needed.
  ///
  /// ```swift
  /// extension SharedKey where Self == InMemoryKey<Session?>.Default {
  ///   static var session: Self { Self[.inMemory("session"), default: nil] }
  /// }
  /// @Shared(.session) var session
  /// ```
  ///
  /// The storage is the current ``SharedEnvironment``'s ``InMemoryStorage``: a test running
  /// inside `SharedEnvironment.test().withValue { … }` starts empty.
  ///
  /// - Parameter name: The name that shares the value; the same name and type give the same
  ///   value.
  public static func inMemory<Value>(_ name: String) -> Self where Self == InMemoryKey<Value> {
    InMemoryKey(name: name, storage: SharedEnvironment.current.inMemoryStorage)
  }
}

/// The key behind ``SharedReaderKey/inMemory(_:)``.
public struct InMemoryKey<Value: Sendable>: SharedKey, CustomStringConvertible {
  let name: String
  let storage: InMemoryStorage

  init(name: String, storage: InMemoryStorage) {
    self.name = name
    self.storage = storage
  }

  /// The name and the storage it lives in.
  public struct ID: Hashable, Sendable {
    let name: String
    let storage: ObjectIdentifier
  }

  /// The name and the storage: keys of the same value type with equal ids share one value.
  public var id: ID { ID(name: name, storage: ObjectIdentifier(storage)) }

  /// `.inMemory("NAME")`, for messages and debugging.
  public var description: String { ".inMemory(\(String(reflecting: name)))" }

  /// Nothing is stored before the first handle: the declared default is used.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    continuation.resumeReturningInitialValue()
  }

  /// Nothing changes outside the process.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    SharedSubscription {}
  }

  /// The reference itself is the storage (``InMemoryStorage`` keeps it alive), so there is
  /// nothing to write.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    continuation.resume()
  }
}

extension InMemoryKey: ReferenceRetainingKey {
  func retain(_ reference: any AnyObject & Sendable) {
    storage.retain(reference, name: name, type: ObjectIdentifier(Value.self))
  }
}

/// Where `.inMemory(_:)` values live: it keeps each shared reference alive until the storage
/// itself is released (for ``SharedEnvironment/live``, the whole process).
public final class InMemoryStorage: Sendable {
  private struct Slot: Hashable {
    var name: String
    var type: ObjectIdentifier
  }

  private let references = Mutex<[Slot: any AnyObject & Sendable]>([:])

  /// Creates an empty storage.
  public init() {}

  /// The names currently holding a value.
  public var names: Set<String> { references.withLock { Set($0.keys.map(\.name)) } }

  func retain(_ reference: any AnyObject & Sendable, name: String, type: ObjectIdentifier) {
    references.withLock { $0[Slot(name: name, type: type)] = reference }
  }
}
