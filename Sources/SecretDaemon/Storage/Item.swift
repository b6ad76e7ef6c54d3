// One stored item and one collection as the store indexes them in this process; what they hold
// lives in the arena, where each has one committed record.

/// An item: its metadata, and where its record and its secret are in the arena.
final class StoredItem {
  var label: String
  var attributes: [String: String]
  /// The item's schema (`Type` property), such as `org.freedesktop.Secret.Generic`.
  var type: String
  var contentType: String
  let created: UInt64
  var modified: UInt64
  /// Unix seconds after which the item is gone; nil for never. Set through the store, which
  /// keeps its expiry queue in step.
  var expiresAt: UInt64?
  /// The item's record in the arena.
  var block: Int
  /// Where the secret starts in the arena, and its length.
  var secretOffset: Int
  var secretCount: Int

  init(_ record: ItemRecord, block: Int, secretOffset: Int) {
    label = record.label
    attributes = record.attributes
    type = record.type
    contentType = record.contentType
    created = record.created
    modified = record.modified
    expiresAt = record.expiresAt
    self.block = block
    self.secretOffset = secretOffset
    secretCount = record.secretCount
  }

  func isExpired(at now: UInt64) -> Bool {
    guard let expiresAt else { return false }
    return now >= expiresAt
  }

  /// The record to write for this item, as it is now.
  func record(number: Int, collection: UInt64) -> ItemRecord {
    ItemRecord(
      number: UInt64(number), collectionID: collection, created: created, modified: modified, expiresAt: expiresAt,
      label: label, type: type, contentType: contentType, attributes: attributes, secretCount: secretCount)
  }

  var snapshot: ItemSnapshot {
    ItemSnapshot(label: label, attributes: attributes, type: type, modified: modified)
  }
}

/// A collection of items with its own attribute index.
final class StoredCollection {
  let id: UInt64
  let name: String
  var label: String
  var locked: Bool
  let created: UInt64
  var modified: UInt64
  /// The collection's record in the arena.
  var block: Int
  var items: [Int: StoredItem] = [:]
  var index = AttributeIndex()
  /// Where its items are kept besides the arena; nil for a collection in memory only.
  var backing: (any CollectionBacking)?

  init(_ record: CollectionRecord, block: Int) {
    id = record.id
    name = record.name
    label = record.label
    locked = record.locked
    created = record.created
    modified = record.modified
    self.block = block
  }

  var record: CollectionRecord {
    CollectionRecord(modified: modified, locked: locked, id: id, created: created, name: name, label: label)
  }

  /// Item numbers matching `query` (all items for an empty query), in creation order.
  func search(_ query: [String: String], now: UInt64) -> [Int] {
    let candidates: [Int] = index.matches(query).map(Array.init) ?? Array(items.keys)
    return candidates.filter { items[$0].map { !$0.isExpired(at: now) } ?? false }.sorted()
  }
}
