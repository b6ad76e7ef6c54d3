// Which secret a unit's credential request gets: of the default collection's items, the one
// the address `credential=ID`, `unit=UNIT` names, else the one `credential=ID` names (shared by
// every unit), by the rule `secretctl credential` reads and writes them by (`AddressRule`).
// Written by `secretctl credential set`.
import SecretMemory

/// What a credential request finds.
enum CredentialLookup {
  /// A copy of the secret, in locked memory, to be written after the store's lock is let go.
  case found(SecretBytes)
  case missing
  case locked(collection: String)
  case noMemory
}

extension Store {
  /// The credential `id` for `unit`. Under the store's read lock.
  func credential(_ id: String, for unit: String) -> CredentialLookup {
    guard let name = resolveAlias("default"), let collection = collections[name] else { return .missing }
    // A locked persistent collection holds none of its items in memory: whether it has this
    // one is known only once it is unlocked.
    if collection.locked { return .locked(collection: name) }
    guard
      let number = namedItem(["credential": id, "unit": unit], in: collection)
        ?? namedItem(["credential": id], in: collection),
      let item = collection.items[number]
    else { return .missing }
    guard let copy = SecretBytes(lockedCopying: secret(of: item)) else { return .noMemory }
    return .found(copy)
  }
}
