// Which secret a unit's credential request gets: of the default collection's items, the one
// with attributes `credential=ID` and `unit=UNIT`, else the one with `credential=ID` and no
// `unit` (shared by every unit). Written by `secretctl credential set`.
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
    let now = now
    func first(_ query: [String: String], where keep: (StoredItem) -> Bool) -> StoredItem? {
      collection.search(query, now: now).lazy.compactMap { collection.items[$0] }.first(where: keep)
    }
    guard
      let item = first(["credential": id, "unit": unit], where: { _ in true })
        ?? first(["credential": id], where: { $0.attributes["unit"] == nil })
    else { return .missing }
    if collection.locked { return .locked(collection: ObjectPaths.collection(name)) }
    guard let copy = SecretBytes(lockedCopying: secret(of: item)) else { return .noMemory }
    return .found(copy)
  }
}
