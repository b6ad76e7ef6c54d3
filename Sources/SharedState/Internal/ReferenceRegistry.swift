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
/// The first handle creates the reference with its default; later handles get the same
/// reference. When the last handle goes, the reference is released, its subscription is
/// cancelled and its entry removed.
final class ReferenceRegistry: Sendable {
  static let shared = ReferenceRegistry()

  private struct Entry {
    weak var reference: AnyObject?
  }

  private let entries = Mutex<[ReferenceKey: Entry]>([:])

  /// The live reference for `key`, creating and starting it with `initialValue` if none.
  func reference<Key: SharedReaderKey>(
    for key: Key, initialValue: () -> Key.Value
  ) -> SharedReference<Key.Value> {
    let storedKey = Self.storedKey(key)
    let registryKey = ReferenceKey(storedKey)
    let (reference, created) = entries.withLock { entries in
      if let existing = entries[registryKey]?.reference as? SharedReference<Key.Value> {
        return (existing, false)
      }
      let created = Self.makeReference(
        key, storedKey: storedKey, initialValue: initialValue(), registryKey: registryKey)
      entries[registryKey] = Entry(reference: created)
      return (created, true)
    }
    if created { (storedKey as? any ReferenceRetainingKey)?.retain(reference) }
    reference.startIfNeeded()
    return reference
  }

  /// The live reference for `key`, or one created from a value that must be stored.
  func requiredReference<Key: SharedReaderKey>(for key: Key) async throws -> SharedReference<Key.Value> {
    let storedKey = Self.storedKey(key)
    let registryKey = ReferenceKey(storedKey)
    if let existing = entries.withLock({ $0[registryKey]?.reference as? SharedReference<Key.Value> }) {
      existing.startIfNeeded()
      return existing
    }
    let description = String(describing: storedKey)
    let loaded: Key.Value? = try await withCheckedThrowingContinuation { waiter in
      key.load(
        context: .userInitiated,
        continuation: LoadContinuation(description) { waiter.resume(with: $0) })
    }
    guard let loaded else { throw SharedStateError.valueNotFound(description) }
    let (reference, created) = entries.withLock { entries in
      if let existing = entries[registryKey]?.reference as? SharedReference<Key.Value> {
        return (existing, false)
      }
      let created = Self.makeReference(
        key, storedKey: storedKey, initialValue: loaded, registryKey: registryKey)
      entries[registryKey] = Entry(reference: created)
      return (created, true)
    }
    if created { (storedKey as? any ReferenceRetainingKey)?.retain(reference) }
    reference.startIfNeeded(skipLoad: created)
    return reference
  }

  func removeIfReleased(_ registryKey: ReferenceKey) {
    entries.withLock { entries in
      if let entry = entries[registryKey], entry.reference == nil {
        entries[registryKey] = nil
      }
    }
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
      keyDescription: String(describing: storedKey),
      registryKey: registryKey,
      loader: { context, continuation in key.load(context: context, continuation: continuation) },
      saver: saver,
      subscriber: { context, subscriber in key.subscribe(context: context, subscriber: subscriber) }
    )
  }
}
