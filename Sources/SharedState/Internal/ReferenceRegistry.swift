import Dispatch
import Synchronization

/// A key whose storage keeps its reference alive (`.inMemory`): the reference is the
/// stored value, so its `save` does nothing and is not called after each mutation.
protocol ReferenceRetainingKey {
  func retain(_ reference: any AnyObject & Sendable)
}

/// A key that stands for another one (``SharedKeyDefault``): its handles are handles of the
/// wrapped key, whichever initialiser made them.
protocol WrappingKey {
  var wrappedKey: any SharedReaderKey { get }
}

/// What makes two keys share a reference: the key's type and its `id`.
struct ReferenceKey: Hashable, @unchecked Sendable {
  // SAFETY: a key's `id` need only be Hashable (as in swift-sharing). It is taken once from
  // the key and never mutated here; it is only hashed and compared, by the registry, under the
  // registry's lock. An id that is a class mutated elsewhere would be a programming error of
  // the key (an identity must not change), as it would be for any dictionary key.
  let keyType: ObjectIdentifier
  let id: AnyHashable

  init(_ key: some SharedReaderKey) {
    keyType = ObjectIdentifier(type(of: key))
    id = AnyHashable(key.id)
  }
}

/// The identity registry: one live reference per ``ReferenceKey``, held weakly.
///
/// The first handle registered creates the reference with its default; later handles get the
/// same reference. When the last handle goes, the reference is released, its subscription is
/// cancelled and its entry removed.
///
/// No code but the registry's own runs under its lock: a default value is made, and a key
/// subscribed to and loaded, before the reference is registered (a default may itself declare
/// handles, as nested shared state does), and no strong reference is released inside it (the
/// last one would run the reference's `deinit`, which comes back here).
final class ReferenceRegistry: Sendable {
  static let shared = ReferenceRegistry()

  private struct Entry {
    weak var reference: AnyObject?
  }

  private let entries = Mutex<[ReferenceKey: Entry]>([:])

  /// The live reference for `key`, else one created with `initialValue` and started: subscribed
  /// and loaded, unless `skipInitialLoad` (the caller loads it itself).
  func reference<Key: SharedReaderKey>(
    for key: Key, initialValue: () -> Key.Value, skipInitialLoad: Bool = false
  ) -> SharedReference<Key.Value> {
    let storedKey = Self.storedKey(key)
    let registryKey = ReferenceKey(storedKey)
    if let existing = live(registryKey) as? SharedReference<Key.Value> { return existing }
    let candidate = Self.makeReference(
      key, storedKey: storedKey, initialValue: initialValue(), registryKey: registryKey)
    candidate.start(skipLoad: skipInitialLoad)
    return register(candidate, storedKey: storedKey)
  }

  /// The live reference for `key`, or one created from a value that must be stored.
  func requiredReference<Key: SharedReaderKey>(for key: Key) async throws -> SharedReference<Key.Value> {
    let storedKey = Self.storedKey(key)
    let registryKey = ReferenceKey(storedKey)
    if let existing = live(registryKey) as? SharedReference<Key.Value> { return existing }
    let description = String(reflecting: storedKey)
    let loaded = try await loadOffThePool(description) { key.load(context: .userInitiated, continuation: $0) }.get()
    guard let loaded else { throw SharedStateError.valueNotFound(description) }
    let candidate = Self.makeReference(key, storedKey: storedKey, initialValue: loaded, registryKey: registryKey)
    candidate.start(skipLoad: true)
    return register(candidate, storedKey: storedKey)
  }

  func removeIfReleased(_ registryKey: ReferenceKey) {
    let alive: AnyObject? = entries.withLock { entries in
      guard let entry = entries[registryKey] else { return nil }
      if let reference = entry.reference { return reference }
      entries[registryKey] = nil
      return nil
    }
    _ = alive
  }

  /// The registered reference, as a strong reference that the caller releases (outside the lock).
  private func live(_ registryKey: ReferenceKey) -> AnyObject? {
    entries.withLock { $0[registryKey]?.reference }
  }

  /// Registers `candidate`, unless another thread registered a reference for the same key
  /// meanwhile: then that one is returned and the candidate dropped.
  private func register<Value>(_ candidate: SharedReference<Value>, storedKey: any SharedReaderKey)
    -> SharedReference<Value>
  {
    guard let registryKey = candidate.registryKey else { return candidate }
    let earlier: AnyObject? = entries.withLock { entries in
      if let earlier = entries[registryKey]?.reference { return earlier }
      entries[registryKey] = Entry(reference: candidate)
      return nil
    }
    if let earlier = earlier as? SharedReference<Value> { return earlier }
    (storedKey as? any ReferenceRetainingKey)?.retain(candidate)
    return candidate
  }

  /// The key that says where the value is stored: `key`, or the key it wraps. Its type and id
  /// are the identity; whether it retains the reference decides if mutations are saved.
  private static func storedKey(_ key: any SharedReaderKey) -> any SharedReaderKey {
    guard let wrapper = key as? any WrappingKey else { return key }
    return storedKey(wrapper.wrappedKey)
  }

  private static func makeReference<Key: SharedReaderKey>(
    _ key: Key, storedKey: any SharedReaderKey, initialValue: Key.Value, registryKey: ReferenceKey
  ) -> SharedReference<Key.Value> {
    var saver: SharedReference<Key.Value>.Saver?
    if let writable = key as? any SharedKey<Key.Value>, !(storedKey is any ReferenceRetainingKey) {
      saver = { value, context, continuation in
        writable.save(value, context: context, continuation: continuation)
      }
    }
    return SharedReference(
      initialValue: initialValue,
      keyDescription: String(reflecting: storedKey),
      registryKey: registryKey,
      loader: { context, continuation in key.load(context: context, continuation: continuation) },
      saver: saver,
      subscriber: { context, subscriber in key.subscribe(context: context, subscriber: subscriber) }
    )
  }
}

/// Asks a key to load on a dispatch thread (it may read its store on the calling thread, which
/// must not be one of Swift's cooperative pool) and waits for its result.
func loadOffThePool<Value: Sendable>(
  _ description: String, _ load: @escaping @Sendable (LoadContinuation<Value>) -> Void
) async -> Result<Value?, any Error> {
  let reportIssue = SharedEnvironment.current.reportIssue
  return await withCheckedContinuation { waiter in
    DispatchQueue.global().async {
      load(LoadContinuation(description, reportIssue: reportIssue) { waiter.resume(returning: $0) })
    }
  }
}
