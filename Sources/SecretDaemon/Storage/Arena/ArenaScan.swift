// Opening an arena: every block walked and every committed record checked and decoded before
// anything is changed; then what a crash leaves (a record and its replacement both committed, a
// deleted collection's items, blocks being written) is resolved. Anything that does not check
// out rejects the whole arena: it is never served in part.

/// One walk over an arena's blocks.
struct ArenaScan {
  private(set) var collections: [FoundRecord<CollectionRecord>] = []
  private(set) var items: [(found: FoundRecord<ItemRecord>, secretOffset: Int)] = []
  private(set) var aliases: [FoundRecord<AliasesRecord>] = []
  /// Blocks being written or freed when the process died: wiped and freed.
  private(set) var dirty: [Int] = []
  /// Committed blocks that lose to another copy or belong to no collection: freed.
  private(set) var discarded: [Int] = []
  private(set) var committedBytes = 0
  private(set) var highestSequence: UInt64 = 0
  /// Every block, in order, as its word says.
  private(set) var blocks: [(offset: Int, word: ArenaLayout.BlockWord)] = []
  /// Whether the arena may be of layout 1.
  private let legacy: Bool

  /// Walks the blocks; `legacy` reads layout 1's unchecked words too.
  init(_ arena: Arena, legacy: Bool) throws(ArenaError) {
    self.legacy = legacy
    var offset = ArenaLayout.headerSize
    while offset < arena.size {
      let raw = arena.load(at: offset)
      guard let word = ArenaLayout.BlockWord(decoding: raw, at: offset, legacy: legacy),
        word.size >= ArenaLayout.blockHeaderSize, word.size % ArenaLayout.alignment == 0,
        word.size <= arena.size - offset
      else { throw .damaged(offset: offset, "a block word that does not check out (\(raw))") }
      blocks.append((offset, word))
      switch word.state {
      case .free: break
      case .dirty: dirty.append(offset)
      case .committed:
        guard word.kind != .none else { throw .damaged(offset: offset, "a committed block of no kind") }
        do throws(ArenaError) { try read(word.kind, at: offset, size: word.size, in: arena) } catch {
          throw .damaged(offset: offset, "\(error)")
        }
        committedBytes += word.size
      }
      offset += word.size
    }
  }

  private mutating func read(_ kind: ArenaLayout.RecordKind, at offset: Int, size: Int, in arena: Arena)
    throws(ArenaError)
  {
    let count = Int(arena.loadUInt32(at: offset + ArenaLayout.BlockField.payloadLength))
    guard count <= size - ArenaLayout.blockHeaderSize else { throw .malformed("a payload longer than its block") }
    let sequence = arena.load(at: offset + ArenaLayout.BlockField.sequence)
    guard sequence <= ArenaLayout.largestCounter else { throw .malformed("a sequence out of range (\(sequence))") }
    guard
      arena.load(at: offset + ArenaLayout.BlockField.checksum)
        == arena.checksum(at: offset, kind: kind, sequence: sequence, count: count)
    else { throw .malformed("its checksum does not match") }
    highestSequence = max(highestSequence, sequence)
    var reader = RecordReader(UnsafeRawBufferPointer(arena.payload(at: offset)))
    switch kind {
    case .collection:
      collections.append(
        FoundRecord(offset: offset, sequence: sequence, record: try CollectionRecord.read(&reader, legacy: legacy)))
    case .item:
      let (record, secretOffset) = try ItemRecord.read(&reader)
      items.append((FoundRecord(offset: offset, sequence: sequence, record: record), secretOffset))
    case .aliases:
      aliases.append(FoundRecord(offset: offset, sequence: sequence, record: try AliasesRecord.read(&reader)))
    case .none:
      throw .malformed("a record of no kind")
    }
  }

  /// The records to serve: of each collection, item and the aliases, the copy written last;
  /// items of collections that no longer exist are left out. Fills `discarded`.
  /// Names, of collections and aliases, must pass `isValidName` (the store's rule for them).
  mutating func resolve(isValidName: (String) -> Bool) throws(ArenaError) -> ArenaContents {
    var contents = ArenaContents()
    contents.collections = newest(collections, by: \.record.id)
    var names = Set<String>()
    for collection in contents.collections {
      guard isValidName(collection.record.name), names.insert(collection.record.name).inserted else {
        throw .damaged(offset: collection.offset, "a collection name that is invalid or taken twice")
      }
    }
    for record in aliases where !record.record.aliases.keys.allSatisfy(isValidName) {
      throw .damaged(offset: record.offset, "an invalid alias name")
    }
    let ids = Set(contents.collections.map(\.record.id))
    var newestItems: [UInt64: (found: FoundRecord<ItemRecord>, secretOffset: Int)] = [:]
    for item in items {
      guard ids.contains(item.found.record.collectionID) else {
        discarded.append(item.found.offset)
        continue
      }
      if let kept = newestItems[item.found.record.number] {
        let (winner, loser) = kept.found.sequence > item.found.sequence ? (kept, item) : (item, kept)
        discarded.append(loser.found.offset)
        newestItems[item.found.record.number] = winner
      } else {
        newestItems[item.found.record.number] = item
      }
    }
    contents.items = newestItems.values.sorted { $0.found.record.number < $1.found.record.number }
    let newestAliases = aliases.max { $0.sequence < $1.sequence }
    discarded += aliases.filter { $0.offset != newestAliases?.offset }.map(\.offset)
    contents.aliases = newestAliases
    return contents
  }

  /// Of records sharing a key, the one written last; the others go to `discarded`.
  private mutating func newest<Record, Key: Hashable>(
    _ records: [FoundRecord<Record>], by key: KeyPath<FoundRecord<Record>, Key>
  ) -> [FoundRecord<Record>] {
    var kept: [Key: FoundRecord<Record>] = [:]
    for record in records {
      if let other = kept[record[keyPath: key]] {
        let (winner, loser) = other.sequence > record.sequence ? (other, record) : (record, other)
        discarded.append(loser.offset)
        kept[record[keyPath: key]] = winner
      } else {
        kept[record[keyPath: key]] = record
      }
    }
    return kept.values.sorted { $0.offset < $1.offset }
  }
}
