// The in-memory store: collections, items, aliases, memory use and expiry. Knows nothing of D-Bus.

/// Why the store refused a request.
enum StoreError: Error, Equatable {
  case noSuchCollection(String)
  case noSuchItem(ItemReference)
  case locked(collection: String)
  case limitExceeded(Limit, actual: Int, maximum: Int)
  case invalidExpiry(attribute: String, value: String)
  case invalidName(String)
}

/// A reference to one item. Item numbers are unique across the store and never reused, so an
/// item's object path never names another item, even after its collection was deleted.
struct ItemReference: Hashable, Sendable {
  let collection: String
  let item: Int
}

/// Every collection, item and alias, in memory only. Not thread-safe: the daemon holds its
/// lock around every use.
final class Store {
  /// Attributes that set an item's expiry in unix seconds.
  static let expiryAttributes = ["xdg:expires", "expires-at"]
  /// Longest collection name (derived from the label), so object paths stay short.
  static let maxCollectionNameLength = 64

  let limits: Limits
  let clock: any ExpiryClock
  /// Seconds an item lives when it names no expiry; nil for forever.
  let defaultTTL: UInt64?
  /// Receives every change, after it is made.
  var onEvent: (StoreEvent) -> Void = { _ in }
  /// Called when the earliest expiry changes, with its time (nil: none pending).
  var onNextExpiryChanged: (UInt64?) -> Void = { _ in }

  private(set) var collections: [String: StoredCollection] = [:]
  private(set) var aliases: [String: String] = [:]
  private(set) var itemCount = 0
  /// Bytes of secrets, attributes and labels held, counted against `limits.maxMemory`.
  private(set) var usedBytes = 0
  private var nextItemNumber = 1
  private var expiries = ExpiryQueue()
  /// Entries in the expiry queue, stale ones included.
  var pendingExpiries: Int { expiries.count }

  init(limits: Limits = Limits(), clock: any ExpiryClock = SystemExpiryClock(), defaultTTL: UInt64? = nil) {
    self.limits = limits
    self.clock = clock
    self.defaultTTL = defaultTTL
    collections["session"] = StoredCollection(name: "session", label: "Session", now: clock.now())
    usedBytes = "Session".utf8.count
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
    try limits.checkText(label)
    if !alias.isEmpty {
      guard Self.isValidName(alias) else { throw .invalidName(alias) }
      if let existing = aliases[alias], collections[existing] != nil { return existing }
    }
    guard collections.count < limits.maxCollections else {
      throw .limitExceeded(.collections, actual: collections.count + 1, maximum: limits.maxCollections)
    }
    if !alias.isEmpty, aliases[alias] == nil { try checkRoomForAlias() }
    try reserve(label.utf8.count)
    let name = uniqueCollectionName(for: label)
    collections[name] = StoredCollection(name: name, label: label, now: now)
    onEvent(.collectionCreated(name, collections: collectionNames))
    if !alias.isEmpty { aliases[alias] = name }
    return name
  }

  /// The label's letters and digits, at most 64 bytes, made unique with a number.
  private func uniqueCollectionName(for label: String) -> String {
    let letters = label.lowercased().unicodeScalars.map {
      $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) ? Character($0) : "_"
    }
    var base = String(letters.prefix(Self.maxCollectionNameLength - 8))
    if base.isEmpty { base = "collection" }
    var name = base
    var suffix = 1
    while collections[name] != nil {
      suffix += 1
      name = "\(base)\(suffix)"
    }
    return name
  }

  /// Deletes a collection and its items; a locked one is refused, as each of its items would be.
  func deleteCollection(_ name: String) throws(StoreError) {
    let collection = try collection(name)
    if collection.locked { throw .locked(collection: name) }
    for number in collection.items.keys.sorted() {
      removeItem(collection, number)
    }
    collections[name] = nil
    usedBytes -= collection.label.utf8.count
    for (alias, target) in aliases where target == name { aliases[alias] = nil }
    onEvent(.collectionDeleted(name, collections: collectionNames))
  }

  func setCollectionLabel(_ name: String, _ label: String) throws(StoreError) {
    try limits.checkText(label)
    let collection = try collection(name)
    try reserve(label.utf8.count - collection.label.utf8.count)
    collection.label = label
    collection.modified = now
    onEvent(.collectionChanged(name, label: label, locked: collection.locked))
  }

  func setLocked(_ name: String, _ locked: Bool) throws(StoreError) {
    let collection = try collection(name)
    guard collection.locked != locked else { return }
    collection.locked = locked
    onEvent(.collectionChanged(name, label: collection.label, locked: locked))
  }

  // MARK: Aliases

  static func isValidName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 128
      && name.utf8.allSatisfy {
        ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F
      }
  }

  /// The collection `alias` names, if it exists.
  func resolveAlias(_ alias: String) -> String? {
    guard let target = aliases[alias], collections[target] != nil else { return nil }
    return target
  }

  /// Points `alias` at `collection`, or removes it when `collection` is nil.
  func setAlias(_ alias: String, to collection: String?) throws(StoreError) {
    guard Self.isValidName(alias) else { throw .invalidName(alias) }
    guard let collection else {
      aliases[alias] = nil
      return
    }
    _ = try self.collection(collection)
    if aliases[alias] == nil { try checkRoomForAlias() }
    aliases[alias] = collection
  }

  /// Aliases are bounded by their number (and names by 128 bytes), not by the memory budget.
  private func checkRoomForAlias() throws(StoreError) {
    guard aliases.count < limits.maxAliases else {
      throw .limitExceeded(.aliases, actual: aliases.count + 1, maximum: limits.maxAliases)
    }
  }

  // MARK: Items

  /// The item if it exists and has not expired.
  func item(_ reference: ItemReference) throws(StoreError) -> StoredItem {
    guard let collection = collections[reference.collection] else { throw .noSuchCollection(reference.collection) }
    guard let item = collection.items[reference.item], !item.isExpired(at: now) else {
      throw .noSuchItem(reference)
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
    try limits.checkText(label)
    try limits.checkText(type)
    try limits.checkText(contentType)
    try limits.checkAttributes(attributes)
    try limits.checkSecret(secret)
    let expiry = try expiry(for: attributes)
    let cost =
      secret.count + label.utf8.count + type.utf8.count + contentType.utf8.count + StoredItem.cost(of: attributes)
    if replace,
      let existing = collection.search(attributes, now: now).first(where: {
        collection.items[$0]?.attributes == attributes
      }),
      let item = collection.items[existing]
    {
      try reserve(cost - item.cost)
      item.label = label
      item.type = type
      item.contentType = contentType
      item.secret = secret
      item.modified = now
      let reference = ItemReference(collection: name, item: existing)
      setExpiry(expiry, of: item, reference)
      collection.modified = now
      onEvent(.itemChanged(reference, item.snapshot))
      return (existing, true)
    }
    guard itemCount < limits.maxItems else {
      throw .limitExceeded(.items, actual: itemCount + 1, maximum: limits.maxItems)
    }
    try reserve(cost)
    let number = nextItemNumber
    nextItemNumber += 1
    let item = StoredItem(
      label: label, attributes: attributes, type: type, contentType: contentType, secret: secret, now: now)
    collection.items[number] = item
    collection.index.insert(number, attributes: attributes)
    collection.modified = now
    itemCount += 1
    let reference = ItemReference(collection: name, item: number)
    setExpiry(expiry, of: item, reference)
    onEvent(.itemCreated(reference))
    return (number, false)
  }

  func deleteItem(_ reference: ItemReference) throws(StoreError) {
    _ = try unlockedItem(reference)
    removeItem(try collection(reference.collection), reference.item)
  }

  private func removeItem(_ collection: StoredCollection, _ number: Int) {
    guard let item = collection.items.removeValue(forKey: number) else { return }
    collection.index.remove(number, attributes: item.attributes)
    collection.modified = now
    itemCount -= 1
    usedBytes -= item.cost
    // `item` is released here; its SecureBuffer wipes the secret in deinit.
    onEvent(.itemDeleted(ItemReference(collection: collection.name, item: number)))
  }

  func setSecret(_ reference: ItemReference, _ secret: SecureBuffer, contentType: String) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try limits.checkSecret(secret)
      try limits.checkText(contentType)
      try reserve(secret.count - item.secret.count + contentType.utf8.count - item.contentType.utf8.count)
      item.secret = secret
      item.contentType = contentType
    }
  }

  func setLabel(_ reference: ItemReference, _ label: String) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try limits.checkText(label)
      try reserve(label.utf8.count - item.label.utf8.count)
      item.label = label
    }
  }

  func setType(_ reference: ItemReference, _ type: String) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try limits.checkText(type)
      try reserve(type.utf8.count - item.type.utf8.count)
      item.type = type
    }
  }

  func setAttributes(_ reference: ItemReference, _ attributes: [String: String]) throws(StoreError) {
    try change(reference) { item throws(StoreError) in
      try limits.checkAttributes(attributes)
      let expiry = try expiry(for: attributes)
      let collection = try collection(reference.collection)
      try reserve(StoredItem.cost(of: attributes) - StoredItem.cost(of: item.attributes))
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
    onEvent(.itemChanged(reference, item.snapshot))
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
        if let time = item.expiresAt {
          queue.push(time: time, reference: ItemReference(collection: name, item: number))
        }
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

  // MARK: Memory

  /// Counts `bytes` more (or fewer, when negative) against the memory budget.
  private func reserve(_ bytes: Int) throws(StoreError) {
    guard bytes <= 0 || usedBytes + bytes <= limits.maxMemory else {
      throw .limitExceeded(.memory, actual: usedBytes + bytes, maximum: limits.maxMemory)
    }
    usedBytes += bytes
  }

  /// At most how many items a search for `query` may match, across all collections.
  func matchBound(_ query: [String: String]) -> Int {
    collections.values.reduce(0) { $0 + ($1.index.matchBound(query) ?? $1.items.count) }
  }

  /// Checks a search query's size before any work is done for it.
  func checkQuery(_ attributes: [String: String]) throws(StoreError) {
    try limits.checkAttributes(attributes)
  }
}
