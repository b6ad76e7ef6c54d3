// What the store tells the D-Bus layer after each change, to be announced as signals.

/// An item's properties at one moment, for the signals that announce a change.
struct ItemSnapshot: Equatable, Sendable {
  let label: String
  let attributes: [String: String]
  let type: String
  let modified: UInt64
}

/// What changed, with what the D-Bus layer needs to announce it, captured when it changed.
enum StoreEvent: Equatable, Sendable {
  case collectionCreated(String, collections: [String])
  case collectionDeleted(String, collections: [String])
  case collectionChanged(String, label: String, locked: Bool)
  case itemCreated(ItemReference)
  case itemDeleted(ItemReference)
  case itemChanged(ItemReference, ItemSnapshot)
  /// A collection's items came or went all at once (a persistent collection unlocked or locked):
  /// its item numbers now, announced as one change of its `Items` rather than one signal each.
  case itemsListed(String, items: [Int])
}
