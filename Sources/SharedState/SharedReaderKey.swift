/// A type that can load and subscribe to a value held in some external system.
///
/// A reader key is the read half of a persistence strategy: it says where a shared value lives
/// (``id``), how to read it once (``load(context:continuation:)``) and how to be told when it
/// changes outside the process (``subscribe(context:subscriber:)``). Use it with
/// ``SharedReader`` for data the program consumes but does not own.
///
/// Two handles whose keys have the same type and equal ``id`` share one reference: the first
/// handle's default value wins, later handles see the same value.
///
/// ```swift
/// struct ClockKey: SharedReaderKey {
///   var id: String { "clock" }
///   func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
///     continuation.resume(returning: 42)
///   }
///   func subscribe(
///     context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
///   ) -> SharedSubscription {
///     SharedSubscription {}
///   }
/// }
/// ```
///
/// Obligations of a conforming type:
/// - ``id`` holds everything that tells one stored value from another, and nothing else.
/// - `load` resumes its continuation exactly once: ``LoadContinuation/resumeReturningInitialValue()``
///   when nothing is stored (absent is not an error), a value, or a thrown error.
/// - `subscribe` returns a ``SharedSubscription`` that stops the updates when cancelled.
public protocol SharedReaderKey<Value>: Sendable {
  /// The type of value the key reads.
  associatedtype Value: Sendable

  /// The identity of the stored value. Defaults to the key itself.
  associatedtype ID: Hashable = Self

  /// What identifies the stored value: two keys of the same type with equal ids share one
  /// reference.
  var id: ID { get }

  /// Loads the value once.
  ///
  /// - Parameters:
  ///   - context: Why the load happens: the first load of a reference carries the declared
  ///     default (``LoadContext/initialValue(_:)``), `load()` carries
  ///     ``LoadContext/userInitiated``.
  ///   - continuation: Resume it exactly once with the result.
  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>)

  /// Starts listening to changes made outside the process.
  ///
  /// - Parameters:
  ///   - context: The context of the first load.
  ///   - subscriber: Yield new values, errors or loading state to it.
  /// - Returns: A subscription that stops the updates when cancelled or released.
  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription
}

extension SharedReaderKey where ID == Self {
  /// A key that is its own identity.
  public var id: ID { self }
}

extension SharedReaderKey {
  /// A key paired with a default value, for named keys declared once:
  ///
  /// ```swift
  /// extension SharedKey where Self == InMemoryKey<Int>.Default {
  ///   static var counter: Self { Self[.inMemory("counter"), default: 0] }
  /// }
  /// @Shared(.counter) var counter
  /// ```
  public typealias Default = SharedKeyDefault<Self>
}

/// Why a value is being loaded.
public enum LoadContext<Value: Sendable>: Sendable {
  /// The first load of a reference, with the value declared by the first handle.
  case initialValue(Value)
  /// An explicit reload requested through `load()`.
  case userInitiated

  /// The declared default, when the context carries one.
  public var initialValue: Value? {
    switch self {
    case .initialValue(let value): value
    case .userInitiated: nil
    }
  }
}

extension LoadContext: Equatable where Value: Equatable {}
extension LoadContext: Hashable where Value: Hashable {}
