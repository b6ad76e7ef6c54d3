// Collections and aliases.

extension Store {
  func collection(_ name: String) throws(StoreError) -> StoredCollection {
    guard let collection = collections[name] else { throw .noSuchCollection(name) }
    return collection
  }

  var collectionNames: [String] { collections.keys.sorted() }

  /// Creates a collection, or returns the one `alias` already names. Its name comes from its
  /// label, unless `named` is given.
  @discardableResult
  func createCollection(label: String, alias: String, named: String? = nil) throws(StoreError) -> String {
    if appliesLimits { try limits.checkText(label) }
    if !alias.isEmpty {
      guard Self.isValidName(alias) else { throw .invalidName(alias) }
      if let existing = aliases[alias], collections[existing] != nil { return existing }
    }
    guard !appliesLimits || collections.count < limits.maxCollections else {
      throw .limitExceeded(.collections, actual: collections.count + 1, maximum: limits.maxCollections)
    }
    if !alias.isEmpty, aliases[alias] == nil { try checkRoomForAlias() }
    let name = named ?? uniqueCollectionName(for: label)
    let id = arena.nextCollectionID
    let now = now
    let record = CollectionRecord(modified: now, locked: false, id: id, created: now, name: name, label: label)
    let block = try writeCollection(record, replacing: nil)
    arena.nextCollectionID = id + 1
    collections[name] = StoredCollection(record, block: block)
    onEvent(.collectionCreated(name, collections: collectionNames))
    if !alias.isEmpty { try setAlias(alias, to: name) }
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
  /// The collection's record goes first: items of a collection that is gone are never served.
  func deleteCollection(_ name: String) throws(StoreError) {
    let collection = try collection(name)
    if collection.locked { throw .locked(collection: name) }
    if collection.backing != nil { throw .persistentCollection(name) }
    arena.release(collection.block)
    for number in collection.items.keys.sorted() {
      removeItem(collection, number)
    }
    collections[name] = nil
    let aliased = aliases.filter { $0.value == name }.map(\.key)
    for alias in aliased { aliases[alias] = nil }
    // Space was just freed; an alias record naming a collection that is gone is ignored anyway.
    if !aliased.isEmpty { try? writeAliases() }
    onEvent(.collectionDeleted(name, collections: collectionNames))
  }

  func setCollectionLabel(_ name: String, _ label: String) throws(StoreError) {
    try limits.checkText(label)
    let collection = try collection(name)
    var record = collection.record
    (record.label, record.modified) = (label, now)
    collection.block = try writeCollection(record, replacing: collection.block)
    (collection.label, collection.modified) = (label, record.modified)
    onEvent(.collectionChanged(name, label: label, locked: collection.locked))
  }

  /// Locks or unlocks a collection. Locking a persistent one wipes its items from the arena
  /// (its backing keeps them) and closes its backing; unlocking one whose backing is closed
  /// needs its passphrase (``StoreError/needsPassphrase(collection:)``).
  func setLocked(_ name: String, _ locked: Bool) throws(StoreError) {
    let collection = try collection(name)
    if let backing = collection.backing {
      if locked {
        wipeItems(of: collection)
        backing.close()
      } else if !backing.isOpen {
        throw .needsPassphrase(collection: name)
      }
    }
    guard collection.locked != locked else { return }
    collection.locked = locked
    arena.storeInPlace(locked ? 1 : 0, at: collection.block, field: CollectionRecord.lockedOffset)
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
    if let collection {
      _ = try self.collection(collection)
      if aliases[alias] == nil { try checkRoomForAlias() }
    }
    let previous = aliases[alias]
    aliases[alias] = collection
    do throws(StoreError) { try writeAliases() } catch {
      aliases[alias] = previous
      throw error
    }
  }

  /// Aliases are bounded by their number (and names by 128 bytes).
  private func checkRoomForAlias() throws(StoreError) {
    guard !appliesLimits || aliases.count < limits.maxAliases else {
      throw .limitExceeded(.aliases, actual: aliases.count + 1, maximum: limits.maxAliases)
    }
  }
}
