// The store: collections, items, aliases, memory use and expiry, indexed in this process and
// written through to the arena, where they outlive the process. Every change is in the arena
// before the call that made it returns. Knows nothing of D-Bus.
import SecretAddress
import TransferCrypto

/// Why the store refused a request.
enum StoreError: Error, Equatable {
  case noSuchCollection(String)
  case noSuchItem(ItemReference)
  case locked(collection: String)
  case limitExceeded(Limit, actual: Int, maximum: Int)
  /// The budget allows it, but no free block of the arena is large enough.
  case noRoom(needed: Int, largestFree: Int)
  case invalidExpiry(attribute: String, value: String)
  case invalidName(String)
  /// What the client sent could not be decoded into a secret.
  case secretNotDecoded(CryptoError)
  /// The change could not be written to the collection's backing; nothing was changed.
  case notPersisted(collection: String, reason: String)
  /// The collection is sealed on disk and only its passphrase unlocks it.
  case needsPassphrase(collection: String)
  /// A persistent collection cannot be deleted (its items can).
  case persistentCollection(String)
}

/// A reference to one item. Item numbers are unique across the store and never reused, so an
/// item's object path never names another item, even after its collection was deleted.
struct ItemReference: Hashable, Sendable {
  let collection: String
  let item: Int
}

/// Where the secret of an item being written comes from.
enum SecretSource {
  /// What a client sent: at most `maximumCount` bytes, which `write` decodes into the buffer
  /// it is given (in the arena), returning how many it wrote.
  case sent(maximumCount: Int, write: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> Int)
  /// The item's own secret, already in the arena (its metadata is being changed).
  case kept(StoredItem)
}

/// Every collection, item and alias. Not thread-safe: the daemon holds its lock around every use.
final class Store {
  /// Attributes that set an item's expiry in unix seconds (the client leaves them out of an
  /// address, from the same list).
  static let expiryAttributes = AddressRule.expiryAttributes
  /// Longest collection name (derived from the label), so object paths stay short.
  static let maxCollectionNameLength = 64

  let arena: Arena
  let limits: Limits
  let clock: any ExpiryClock
  /// Seconds an item lives when it names no expiry; nil for forever.
  let defaultTTL: UInt64?
  /// Receives every change, after it is made.
  var onEvent: (StoreEvent) -> Void = { _ in }
  /// Called when the earliest expiry changes, with its time (nil: none pending).
  var onNextExpiryChanged: (UInt64?) -> Void = { _ in }

  var collections: [String: StoredCollection] = [:]
  var aliases: [String: String] = [:]
  /// The arena's record of every alias.
  var aliasesBlock: Int?
  var itemCount = 0
  var expiries = ExpiryQueue()
  /// Entries in the expiry queue, stale ones included.
  var pendingExpiries: Int { expiries.count }

  /// Bytes of the arena's records, counted against `limits.maxMemory`.
  var usedBytes: Int { arena.usedBytes }

  /// Whether the limits apply: to everything but the records a new store starts with.
  var appliesLimits = true

  /// A store in a new arena: the collection `session`, under the aliases `default` and
  /// `session`, to which with `limited: false` no limit applies.
  init(
    formatting arena: Arena, limits: Limits, clock: any ExpiryClock = SystemExpiryClock(), defaultTTL: UInt64? = nil,
    limited: Bool = true
  ) throws(StoreError) {
    (self.arena, self.limits, self.clock, self.defaultTTL) = (arena, limits, clock, defaultTTL)
    appliesLimits = limited
    let name = try createCollection(label: "Session", alias: "default", named: "session")
    try setAlias("session", to: name)
    appliesLimits = true
  }

  /// The store an arena left by an earlier process holds.
  init(
    recovering arena: Arena, contents: ArenaContents, limits: Limits, clock: any ExpiryClock = SystemExpiryClock(),
    defaultTTL: UInt64? = nil
  ) {
    (self.arena, self.limits, self.clock, self.defaultTTL) = (arena, limits, clock, defaultTTL)
    var byID: [UInt64: StoredCollection] = [:]
    for found in contents.collections {
      let collection = StoredCollection(found.record, block: found.offset)
      collections[collection.name] = collection
      byID[collection.id] = collection
    }
    for (found, secretOffset) in contents.items {
      guard let collection = byID[found.record.collectionID] else { continue }
      let item = StoredItem(
        found.record, block: found.offset, secretOffset: found.offset + ArenaLayout.blockHeaderSize + secretOffset)
      let number = Int(found.record.number)
      collection.items[number] = item
      collection.index.insert(number, attributes: item.attributes)
      itemCount += 1
      if let time = item.expiresAt {
        expiries.push(time: time, reference: ItemReference(collection: collection.name, item: number))
      }
    }
    for (alias, id) in contents.aliases?.record.aliases ?? [:] {
      if let collection = byID[id] { aliases[alias] = collection.name }
    }
    aliasesBlock = contents.aliases?.offset
  }

  var now: UInt64 { clock.now() }

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

  /// The secret of `item`, in the arena; valid while the store's lock is held.
  func secret(of item: StoredItem) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: arena.memory.base + item.secretOffset, count: item.secretCount)
  }

  /// Stores a new item, or with `replace` overwrites the item these attributes name
  /// (`AddressRule`: its schema name and expiry aside, the client's own rule), which takes them
  /// all, its expiry included. Returns the item's number and whether it replaced one.
  func createItem(
    in name: String, label: String, attributes: [String: String], type: String = "", contentType: String,
    secret: SecretSource, replace: Bool
  ) throws(StoreError) -> (item: Int, replaced: Bool) {
    let collection = try collection(name)
    if collection.locked { throw .locked(collection: name) }
    for text in [label, type, contentType] { try limits.checkText(text) }
    try limits.checkAttributes(attributes)
    let expiry = try expiry(for: attributes)
    if replace, let existing = namedItem(attributes, in: collection), let item = collection.items[existing] {
      let reference = ItemReference(collection: name, item: existing)
      let (previous, previousAttributes) = (item.expiresAt, item.attributes)
      try rewrite(item, reference, secret: secret) { item in
        (item.label, item.type, item.contentType) = (label, type, contentType)
        (item.attributes, item.expiresAt) = (attributes, expiry)
      }
      if previousAttributes != attributes {
        collection.index.remove(existing, attributes: previousAttributes)
        collection.index.insert(existing, attributes: attributes)
      }
      scheduleExpiry(of: item, reference, previous: previous)
      onEvent(.itemChanged(reference, item.snapshot))
      return (existing, true)
    }
    guard itemCount < limits.maxItems else {
      throw .limitExceeded(.items, actual: itemCount + 1, maximum: limits.maxItems)
    }
    let number = Int(arena.nextItemNumber)
    let now = now
    let record = ItemRecord(
      number: UInt64(number), collectionID: collection.id, created: now, modified: now, expiresAt: expiry,
      label: label, type: type, contentType: contentType, attributes: attributes, secretCount: 0)
    let placed = try writeItem(record, secret: secret, replacing: nil, backing: collection.backing)
    // Numbers are never reused: taken for good once a record may carry one.
    arena.nextItemNumber = UInt64(number + 1)
    let item = StoredItem(
      ItemRecord(
        number: record.number, collectionID: record.collectionID, created: now, modified: now, expiresAt: expiry,
        label: label, type: type, contentType: contentType, attributes: attributes, secretCount: placed.secretCount),
      block: placed.block, secretOffset: placed.secretOffset)
    collection.items[number] = item
    collection.index.insert(number, attributes: attributes)
    touch(collection)
    itemCount += 1
    let reference = ItemReference(collection: name, item: number)
    scheduleExpiry(of: item, reference, previous: nil)
    onEvent(.itemCreated(reference))
    return (number, false)
  }

  /// The first item of `collection` that `attributes` name (`AddressRule`), by the index.
  func namedItem(_ attributes: [String: String], in collection: StoredCollection) -> Int? {
    let address = AddressRule.address(of: attributes)
    return collection.search(address, now: now).first {
      collection.items[$0].map { AddressRule.isNamed($0.attributes, by: address) } ?? false
    }
  }

  /// Deletes an item; a persistent collection's backing records the deletion first.
  func deleteItem(_ reference: ItemReference) throws(StoreError) {
    _ = try unlockedItem(reference)
    let collection = try collection(reference.collection)
    try collection.backing?.persistDeletion(item: reference.item)
    removeItem(collection, reference.item)
  }

  /// Removes an item from the index and the arena (its record is wiped there); `announced`
  /// with ItemDeleted unless the caller announces many at once.
  func removeItem(_ collection: StoredCollection, _ number: Int, announced: Bool = true) {
    guard let item = collection.items.removeValue(forKey: number) else { return }
    collection.index.remove(number, attributes: item.attributes)
    arena.release(item.block)
    touch(collection)
    itemCount -= 1
    if announced { onEvent(.itemDeleted(ItemReference(collection: collection.name, item: number))) }
  }

  func setSecret(_ reference: ItemReference, _ secret: SecretSource, contentType: String) throws(StoreError) {
    try limits.checkText(contentType)
    try change(reference, secret: secret) { $0.contentType = contentType }
  }

  func setLabel(_ reference: ItemReference, _ label: String) throws(StoreError) {
    try limits.checkText(label)
    try change(reference) { $0.label = label }
  }

  func setType(_ reference: ItemReference, _ type: String) throws(StoreError) {
    try limits.checkText(type)
    try change(reference) { $0.type = type }
  }

  func setAttributes(_ reference: ItemReference, _ attributes: [String: String]) throws(StoreError) {
    try limits.checkAttributes(attributes)
    let expiry = try expiry(for: attributes)
    let collection = try collection(reference.collection)
    let item = try unlockedItem(reference)
    let (previousAttributes, previousExpiry) = (item.attributes, item.expiresAt)
    try change(reference) {
      $0.attributes = attributes
      $0.expiresAt = expiry
    }
    collection.index.remove(reference.item, attributes: previousAttributes)
    collection.index.insert(reference.item, attributes: attributes)
    scheduleExpiry(of: item, reference, previous: previousExpiry)
  }

  /// Applies one change to an unlocked item and writes it, then signals `ItemChanged`; a change
  /// that cannot be written leaves the item as it was.
  private func change(
    _ reference: ItemReference, secret: SecretSource? = nil, _ apply: (StoredItem) -> Void
  ) throws(StoreError) {
    let item = try unlockedItem(reference)
    try rewrite(item, reference, secret: secret ?? .kept(item), apply)
    onEvent(.itemChanged(reference, item.snapshot))
  }

  /// Writes `item` changed by `apply`, with its secret from `secret`, as a new record that
  /// replaces its old one; on failure the item is left as it was.
  private func rewrite(
    _ item: StoredItem, _ reference: ItemReference, secret: SecretSource, _ apply: (StoredItem) -> Void
  ) throws(StoreError) {
    guard let collection = collections[reference.collection] else { throw .noSuchCollection(reference.collection) }
    let saved = item.record(number: reference.item, collection: collection.id)
    apply(item)
    item.modified = now
    do throws(StoreError) {
      let placed = try writeItem(
        item.record(number: reference.item, collection: collection.id), secret: secret, replacing: item,
        backing: collection.backing)
      (item.block, item.secretOffset, item.secretCount) = (placed.block, placed.secretOffset, placed.secretCount)
    } catch {
      (item.label, item.type, item.contentType) = (saved.label, saved.type, saved.contentType)
      (item.attributes, item.modified, item.expiresAt) = (saved.attributes, saved.modified, saved.expiresAt)
      throw error
    }
    touch(collection)
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

  /// At most how many items a search for `query` may match, across all collections.
  func matchBound(_ query: [String: String]) -> Int {
    collections.values.reduce(0) { $0 + ($1.index.matchBound(query) ?? $1.items.count) }
  }

  /// Checks a search query's size before any work is done for it.
  func checkQuery(_ attributes: [String: String]) throws(StoreError) {
    try limits.checkAttributes(attributes)
  }
}
