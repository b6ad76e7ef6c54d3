// One stored secret and its metadata; a collection of them with its attribute index.

/// An item: label, attributes, content type, the secret in locked memory, times, expiry.
final class StoredItem {
  var label: String
  var attributes: [String: String]
  /// The item's schema (`Type` property), such as `org.freedesktop.Secret.Generic`.
  var type: String
  var contentType: String
  /// Replacing it releases (and so wipes) the previous buffer.
  var secret: SecureBuffer
  let created: UInt64
  var modified: UInt64
  /// Unix seconds after which the item is gone; nil for never. Set through the store, which
  /// keeps its expiry queue in step.
  var expiresAt: UInt64?

  init(
    label: String, attributes: [String: String], type: String, contentType: String, secret: SecureBuffer, now: UInt64
  ) {
    self.label = label
    self.attributes = attributes
    self.type = type
    self.contentType = contentType
    self.secret = secret
    self.created = now
    self.modified = now
  }

  var secretCount: Int { secret.count }

  func isExpired(at now: UInt64) -> Bool {
    guard let expiresAt else { return false }
    return now >= expiresAt
  }

  /// What the item counts against the memory budget.
  var cost: Int {
    secret.count + label.utf8.count + type.utf8.count + contentType.utf8.count + Self.cost(of: attributes)
  }

  static func cost(of attributes: [String: String]) -> Int {
    attributes.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
  }

  var snapshot: ItemSnapshot {
    ItemSnapshot(label: label, attributes: attributes, type: type, modified: modified)
  }
}

/// A collection of items with its own attribute index.
final class StoredCollection {
  let name: String
  var label: String
  var locked = false
  let created: UInt64
  var modified: UInt64
  var items: [Int: StoredItem] = [:]
  var index = AttributeIndex()

  init(name: String, label: String, now: UInt64) {
    self.name = name
    self.label = label
    self.created = now
    self.modified = now
  }

  /// Item numbers matching `query` (all items for an empty query), in creation order.
  func search(_ query: [String: String], now: UInt64) -> [Int] {
    let candidates: [Int] = index.matches(query).map(Array.init) ?? Array(items.keys)
    return candidates.filter { items[$0].map { !$0.isExpired(at: now) } ?? false }.sorted()
  }
}
