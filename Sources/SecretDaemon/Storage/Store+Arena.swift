// How the store's changes reach the arena: each record written whole and committed before the
// one it replaces is freed, within the memory budget.
import TransferCrypto

extension Store {
  /// Counts `cost` more bytes against the budget, `freed` bytes fewer once the change is made.
  func reserve(_ cost: Int, freeing freed: Int = 0) throws(StoreError) {
    let after = arena.usedBytes - freed + cost
    guard !appliesLimits || cost <= freed || after <= limits.maxMemory else {
      throw .limitExceeded(.memory, actual: after, maximum: limits.maxMemory)
    }
  }

  /// Writes an item's record, its secret from `secret`, replacing `old`'s record once it is
  /// committed. `backing` records the whole record first (before the arena commits it): when
  /// it refuses, nothing is written. Returns where the record and the secret are.
  func writeItem(
    _ record: ItemRecord, secret: SecretSource, replacing old: StoredItem?, backing: (any CollectionBacking)? = nil
  ) throws(StoreError) -> (block: Int, secretOffset: Int, secretCount: Int) {
    var record = record
    switch secret {
    case .sent(let maximumCount, _): record.secretCount = maximumCount
    case .kept(let item): record.secretCount = item.secretCount
    }
    let before = record.bytesBeforeSecret
    let payloadCount = record.payloadCount
    try reserve(Arena.cost(payload: payloadCount), freeing: old.map { arena.blockSize(at: $0.block) } ?? 0)
    var secretCount = 0
    let written = try arena.write(.item, payloadCount: payloadCount) { (payload) throws(StoreError) -> Int in
      let destination = UnsafeMutableRawBufferPointer(rebasing: payload[before...])
      switch secret {
      case .sent(_, let decode):
        do throws(CryptoError) { secretCount = try decode(destination) } catch { throw .secretNotDecoded(error) }
        try limits.checkSecretSize(secretCount)
      case .kept(let item):
        secretCount = item.secretCount
        destination.copyMemory(from: self.secret(of: item))
      }
      record.secretCount = secretCount
      var writer = RecordWriter(payload)
      record.write(to: &writer)
      try backing?.persist(
        item: Int(record.number), payload: UnsafeRawBufferPointer(rebasing: payload[..<(before + secretCount)]))
      return before + secretCount
    }
    guard let block = written else { throw noRoom(for: payloadCount) }
    if let old { arena.release(old.block) }
    return (block, block + ArenaLayout.blockHeaderSize + before, secretCount)
  }

  /// Writes a collection's record, replacing `old` once it is committed; returns its block.
  func writeCollection(_ record: CollectionRecord, replacing old: Int?) throws(StoreError) -> Int {
    try reserve(Arena.cost(payload: record.payloadCount), freeing: old.map(arena.blockSize) ?? 0)
    let written = arena.write(.collection, payloadCount: record.payloadCount) { payload in
      var writer = RecordWriter(payload)
      record.write(to: &writer)
      return writer.offset
    }
    guard let block = written else { throw noRoom(for: record.payloadCount) }
    if let old { arena.release(old) }
    return block
  }

  /// Writes every alias as one record, replacing the previous one.
  func writeAliases() throws(StoreError) {
    let record = AliasesRecord(aliases: aliases.compactMapValues { collections[$0]?.id })
    try reserve(Arena.cost(payload: record.payloadCount), freeing: aliasesBlock.map(arena.blockSize) ?? 0)
    let written = arena.write(.aliases, payloadCount: record.payloadCount) { payload in
      var writer = RecordWriter(payload)
      record.write(to: &writer)
      return writer.offset
    }
    guard let block = written else { throw noRoom(for: record.payloadCount) }
    if let old = aliasesBlock { arena.release(old) }
    aliasesBlock = block
  }

  private func noRoom(for payloadCount: Int) -> StoreError {
    .noRoom(needed: Arena.cost(payload: payloadCount), largestFree: arena.largestFreeBlock)
  }

  /// Stamps a collection modified, in place.
  func touch(_ collection: StoredCollection) {
    collection.modified = now
    arena.storeInPlace(collection.modified, at: collection.block, field: CollectionRecord.modifiedOffset)
  }
}
