// The in-memory store: collections, items, aliases, bounds and expiry. Knows nothing of D-Bus.

/// Why the store refused a request.
enum StoreError: Error, Equatable {
  case noSuchCollection(String)
  case noSuchItem(collection: String, item: Int)
  case locked(collection: String)
  case limitExceeded(Limit, actual: Int, maximum: Int)
  case invalidExpiry(attribute: String, value: String)
  case invalidName(String)
}

/// What changed, for the D-Bus layer to turn into signals.
enum StoreEvent: Equatable {
  case collectionCreated(String)
  case collectionDeleted(String)
  case collectionChanged(String)
  /// An alias was set, moved or removed.
  case aliasesChanged
  case itemCreated(collection: String, item: Int)
  case itemDeleted(collection: String, item: Int)
  case itemChanged(collection: String, item: Int)
}

/// A reference to one item.
struct ItemReference: Hashable {
  let collection: String
  let item: Int
}

/// Every collection, item and alias, in memory only.
final class Store {
  /// Attributes that set an item's expiry in unix seconds.
  static let expiryAttributes = ["xdg:expires", "expires-at"]

  let limits: Limits
  let clock: any Clock
  /// Seconds an item lives when it names no expiry; nil for forever.
  let defaultTTL: UInt64?
  /// Receives every change, after it is made.
  var onEvent: (StoreEvent) -> Void = { _ in }
  /// Called when the earliest expiry changes, with its time (nil: none pending).
  var onNextExpiryChanged: (UInt64?) -> Void = { _ in }

  private(set) var collections: [String: StoredCollection] = [:]
  private(set) var aliases: [String: String] = [:]
  private(set) var itemCount = 0
  private var expiries = ExpiryQueue()
  /// Entries in the expiry queue, stale ones included.
  var pendingExpiries: Int { expiries.count }

  init(limits: Limits = Limits(), clock: any Clock = SystemClock(), defaultTTL: UInt64? = nil) {
    self.limits = limits
    self.clock = clock
    self.defaultTTL = defaultTTL
    let session = StoredCollection(name: "session", label: "Session", now: clock.now())
    collections["session"] = session
    aliases["default"] = "session"
    aliases["session"] = "session"
  }

  var now: UInt64 { clock.now() }

  // MARK: Collections

  func collection(_ name: String) throws(StoreError) -> StoredCollection {
    guard let collection = collections[name] else { throw .noSuchCollection(name) }
    return collection
  }

  var collectionNames: [String] { collections.keys.sorted() }

  /// Creates a collection, or returns the one `alias` already names.
  func createCollection(label: String, alias: String) throws(StoreError) -> String {
    try checkText(label)
    if !alias.isEmpty {
      guard Self.isValidName(alias) else { throw .invalidName(alias) }
      if let existing = aliases[alias], collections[existing] != nil { return existing }
    }
    var base = String(label.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    if base.isEmpty { base = "collection" }
    var name = base
    var suffix = 1
    while collections[name] != nil {
      suffix += 1
      name = "\(base)\(suffix)"
    }
    collections[name] = StoredCollection(name: name, label: label, now: now)
    onEvent(.collectionCreated(name))
    if !alias.isEmpty {
      aliases[alias] = name
      onEvent(.aliasesChanged)
    }
    return name
  }

  func deleteCollection(_ name: String) throws(StoreError) {
    let collection = try collection(name)
    for number in collection.items.keys.sorted() {
      removeItem(collection, number)
    }
    collections[name] = nil
    for (alias, target) in aliases where target == name { aliases[alias] = nil }
    onEvent(.collectionDeleted(name))
  }

  func setCollectionLabel(_ name: String, _ label: String) throws(StoreError) {
    try checkText(label)
    let collection = try collection(name)
    collection.label = label
    collection.modified = now
    onEvent(.collectionChanged(name))
  }

  func setLocked(_ name: String, _ locked: Bool) throws(StoreError) {
    let collection = try collection(name)
    guard collection.locked != locked else { return }
    collection.locked = locked
    onEvent(.collectionChanged(name))
  }

  // MARK: Aliases

  static func isValidName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 128
      && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
  }

  /// The collection `alias` names, if it exists.
  func resolveAlias(_ alias: String) -> String? {
    guard let target = aliases[alias], collections[target] != nil else { return nil }
    return target
  }

  /// Points `alias` at `collection`, or removes it when `collection` is nil.
  func setAlias(_ alias: String, to collection: String?) throws(StoreError) {
    guard Self.isValidName(alias) else { throw .invalidName(alias) }
    if let collection {
      _ = try self.collection(collection)
      aliases[alias] = collection
    } else {
      aliases[alias] = nil
    }
    onEvent(.aliasesChanged)
  }

  // MARK: Items

  /// The item if it exists and has not expired.
  func item(_ reference: ItemReference) throws(StoreError) -> StoredItem {
    guard let collection = collections[reference.collection] else { throw .noSuchCollection(reference.collection) }
    guard let item = collection.items[reference.item], !item.isExpired(at: now) else {
      throw .noSuchItem(collection: reference.collection, item: reference.item)
    }
    return item
  }

  /// The item, refusing when its collection is locked.
  func unlockedItem(_ reference: ItemReference) throws(StoreError) -> StoredItem {
    let item = try item(reference)
    if collections[reference.collection]?.locked == true { throw .locked(collection: reference.collection) }
    return item
  }

  /// Stores a new item, or with `replace` overwrites the item with exactly these attributes.
  /// Returns the item's number and whether it replaced one.
  func createItem(
    in name: String, label: String, attributes: [String: String], type: String = "", contentType: String,
    secret: SecureBuffer, replace: Bool
  ) throws(StoreError) -> (item: Int, replaced: Bool) {
    let collection = try collection(name)
    if collection.locked { throw .locked(collection: name) }
    try checkText(label)
    try checkText(type)
    try checkText(contentType)
    try checkAttributes(attributes)
    try checkSecret(secret)
    let expiry = try expiry(for: attributes)
    if replace, let existing = collection.search(attributes, now: now).first(where: { collection.items[$0]?.attributes == attributes }),
      let item = collection.items[existing]
    {
      item.label = label
      item.type = type
      item.contentType = contentType
      item.secret = secret
      item.modified = now
      setExpiry(expiry, of: item, ItemReference(collection: name, item: existing))
      collection.modified = now
      onEvent(.itemChanged(collection: name, item: existing))
      return (existing, true)
    }
    guard itemCount < limits.maxItems else {
      throw .limitExceeded(.items, actual: itemCount + 1, maximum: limits.maxItems)
    }
    let number = collection.nextNumber
    collection.nextNumber += 1
    let item = StoredItem(label: label, attributes: attributes, type: type, contentType: contentType, secret: secret, now: now)
    collection.items[number] = item
    collection.index.insert(number, attributes: attributes)
    collection.modified = now
    itemCount += 1
    setExpiry(expiry, of: item, ItemReference(collection: name, item: number))
    onEvent(.itemCreated(collection: name, item: number))
    return (number, false)
  }

  func deleteItem(_ reference: ItemReference) throws(StoreError) {
    _ = try item(reference)
    guard let collection = collections[reference.collection] else { throw .noSuchCollection(reference.collection) }
    if collection.locked { throw .locked(collection: reference.collection) }
    removeItem(collection, reference.item)
  }

  private func removeItem(_ collection: StoredCollection, _ number: Int) {
    guard let item = collection.items.removeValue(forKey: number) else { return }
    collection.index.remove(number, attributes: item.attributes)
    collection.modified = now
    itemCount -= 1
    // `item` is released here; its SecureBuffer wipes the secret in deinit.
    onEvent(.itemDeleted(collection: collection.name, item: number))
  }

  func setSecret(_ reference: ItemReference, _ secret: SecureBuffer, contentType: String) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try checkSecret(secret)
      try checkText(contentType)
      item.secret = secret
      item.contentType = contentType
    }
  }

  func setLabel(_ reference: ItemReference, _ label: String) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try checkText(label)
      item.label = label
    }
  }

  func setType(_ reference: ItemReference, _ type: String) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try checkText(type)
      item.type = type
    }
  }

  func setAttributes(_ reference: ItemReference, _ attributes: [String: String]) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try checkAttributes(attributes)
      let expiry = try expiry(for: attributes)
      guard let collection = collections[reference.collection] else { throw .noSuchCollection(reference.collection) }
      collection.index.remove(reference.item, attributes: item.attributes)
      item.attributes = attributes
      collection.index.insert(reference.item, attributes: attributes)
      setExpiry(expiry, of: item, reference)
    }
  }

  /// Applies one change to an unlocked item, then stamps it and signals `ItemChanged`; a change
  /// that throws leaves the item as it was.
  private func change(_ reference: ItemReference, _ apply: (StoredItem) throws(StoreError) -> Void) throws(StoreError) {
    let item = try unlockedItem(reference)
    try apply(item)
    item.modified = now
    onEvent(.itemChanged(collection: reference.collection, item: reference.item))
  }

  /// Matching items across all collections, split by their collection's lock state.
  func search(_ query: [String: String]) -> (unlocked: [ItemReference], locked: [ItemReference]) {
    var unlocked: [ItemReference] = []
    var locked: [ItemReference] = []
    let now = now
    for name in collectionNames {
      guard let collection = collections[name] else { continue }
      let found = collection.search(query, now: now).map { ItemReference(collection: name, item: $0) }
      if collection.locked { locked += found } else { unlocked += found }
    }
    return (unlocked, locked)
  }

  // MARK: Expiry

  /// Removes every item whose time has come, with `itemDeleted` events.
  /// Returns the next pending expiry.
  @discardableResult
  func purgeExpired() -> UInt64? {
    let now = now
    while let next = expiries.peek, next.time <= now {
      expiries.pop()
      guard let collection = collections[next.reference.collection],
        let item = collection.items[next.reference.item], let expiresAt = item.expiresAt, expiresAt <= now
      else { continue }
      removeItem(collection, next.reference.item)
    }
    return expiries.peek?.time
  }

  /// Sets when `item` expires. An entry whose item was deleted or given another time stays in
  /// the queue until it comes up (it is skipped then); once stale entries could outnumber the
  /// items, the queue is rebuilt from the items, so it never grows with rewrites alone.
  private func setExpiry(_ expiry: UInt64?, of item: StoredItem, _ reference: ItemReference) {
    guard item.expiresAt != expiry else { return }
    if expiries.count > 2 * itemCount + 64 { rebuildExpiries() }
    item.expiresAt = expiry
    guard let expiry else { return }
    let previous = expiries.peek?.time
    expiries.push(time: expiry, reference: reference)
    if previous.map({ expiry < $0 }) ?? true { onNextExpiryChanged(expiry) }
  }

  private func rebuildExpiries() {
    var queue = ExpiryQueue()
    for (name, collection) in collections {
      for (number, item) in collection.items {
        if let time = item.expiresAt { queue.push(time: time, reference: ItemReference(collection: name, item: number)) }
      }
    }
    expiries = queue
  }

  private func expiry(for attributes: [String: String]) throws(StoreError) -> UInt64? {
    for name in Self.expiryAttributes {
      if let value = attributes[name] {
        guard let seconds = UInt64(value) else { throw .invalidExpiry(attribute: name, value: value) }
        return seconds
      }
    }
    return defaultTTL.map { now + $0 }
  }

  // MARK: Bounds

  private func checkText(_ text: String) throws(StoreError) {
    let length = text.utf8.count
    if length > limits.maxAttributeLength {
      throw .limitExceeded(.attributeLength, actual: length, maximum: limits.maxAttributeLength)
    }
  }

  private func checkAttributes(_ attributes: [String: String]) throws(StoreError) {
    if attributes.count > limits.maxAttributes {
      throw .limitExceeded(.attributes, actual: attributes.count, maximum: limits.maxAttributes)
    }
    for (name, value) in attributes {
      try checkText(name)
      try checkText(value)
    }
  }

  private func checkSecret(_ secret: SecureBuffer) throws(StoreError) {
    if secret.count > limits.maxSecretSize {
      throw .limitExceeded(.secretSize, actual: secret.count, maximum: limits.maxSecretSize)
    }
  }
}

/// A binary min-heap of expiry times.
struct ExpiryQueue {
  struct Entry {
    let time: UInt64
    let reference: ItemReference
  }

  private var heap: [Entry] = []

  var peek: Entry? { heap.first }
  var count: Int { heap.count }

  mutating func push(time: UInt64, reference: ItemReference) {
    heap.append(Entry(time: time, reference: reference))
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].time < heap[parent].time else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  @discardableResult
  mutating func pop() -> Entry? {
    guard !heap.isEmpty else { return nil }
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].time < heap[smallest].time { smallest = left }
      if right < heap.count, heap[right].time < heap[smallest].time { smallest = right }
      guard smallest != parent else { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return top
  }
}
