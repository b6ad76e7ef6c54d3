/// A type that can load, subscribe to and save a value held in some external system.
///
/// A key adds writing to ``SharedReaderKey``. ``Shared`` calls
/// ``save(_:context:continuation:)`` with ``SaveContext/didSet`` after every
/// ``Shared/withLock(_:fileID:filePath:line:column:)`` and with ``SaveContext/userInitiated``
/// from ``Shared/save()``.
///
/// ```swift
/// struct LogKey: SharedKey {
///   var id: String { "log" }
///   func load(context: LoadContext<[String]>, continuation: LoadContinuation<[String]>) {
///     continuation.resumeReturningInitialValue()
///   }
///   func subscribe(
///     context: LoadContext<[String]>, subscriber: SharedSubscriber<[String]>
///   ) -> SharedSubscription { SharedSubscription {} }
///   func save(_ value: [String], context: SaveContext, continuation: SaveContinuation) {
///     print(value.last ?? "")
///     continuation.resume()
///   }
/// }
/// ```
///
/// A key that batches writes should batch ``SaveContext/didSet`` saves and write
/// ``SaveContext/userInitiated`` saves before resuming the continuation: a key over a
/// ``PersistentStore`` gets both from ``PersistentValue`` (see ``PersistentKey``).
public protocol SharedKey<Value>: SharedReaderKey {
  /// Saves a value.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - context: ``SaveContext/didSet`` after a mutation (may be deferred and batched),
  ///     ``SaveContext/userInitiated`` from `save()` (must be stored before resuming).
  ///   - continuation: Resume it exactly once, when the value is stored or the save failed.
  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation)
}

/// Why a value is being saved.
public enum SaveContext: Hashable, Sendable {
  /// The value changed through `withLock`; the key may defer and batch the write.
  case didSet
  /// `save()` was called; the key must store the value before resuming.
  case userInitiated
}
