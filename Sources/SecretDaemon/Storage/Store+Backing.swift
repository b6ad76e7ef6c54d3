// A backed collection's items in and out of the arena: wiped when it locks (its backing keeps
// them), written back from their records when it is unlocked.
import SecretMemory

extension Store {
  /// Removes every item of `collection` from the index and the arena (each record wiped
  /// there), recording nothing in its backing; announced as one change of its items.
  func wipeItems(of collection: StoredCollection) {
    for number in collection.items.keys.sorted() { removeItem(collection, number, announced: false) }
    onEvent(.itemsListed(collection.name, items: []))
  }

  /// Writes `records` (each an item's record as ``writeItem(_:secret:replacing:backing:)``
  /// gave its backing, by item number) into `name`'s arena and index, without recording them
  /// again; announced as one change of its items (10,000 ItemCreated signals cost more than
  /// the unsealing). All or nothing: a record that does not read or fit removes those written
  /// so far.
  func loadItems(_ records: [(number: Int, payload: SecretBytes)], into name: String) throws(StoreError) {
    let collection = try collection(name)
    var loaded: [Int] = []
    do throws(StoreError) {
      for (number, payload) in records.sorted(by: { $0.number < $1.number }) {
        guard collection.items[number] == nil else {
          throw .notPersisted(collection: name, reason: "item \(number) is stored twice")
        }
        try loadItem(number, payload, into: collection)
        loaded.append(number)
      }
    } catch {
      for number in loaded { removeItem(collection, number, announced: false) }
      throw error
    }
    onEvent(.itemsListed(name, items: collection.items.keys.sorted()))
    if let largest = records.map(\.number).max(), arena.nextItemNumber <= UInt64(largest) {
      arena.nextItemNumber = UInt64(largest) + 1
    }
  }

  private func loadItem(_ number: Int, _ payload: SecretBytes, into collection: StoredCollection) throws(StoreError) {
    try payload.withUnsafeBytes { (bytes) throws(StoreError) in
      var reader = RecordReader(bytes)
      let read: (record: ItemRecord, secretOffset: Int)
      do throws(ArenaError) { read = try ItemRecord.read(&reader) } catch {
        throw .notPersisted(collection: collection.name, reason: "item \(number)'s record does not read (\(error))")
      }
      var record = read.record
      (record.number, record.collectionID) = (UInt64(number), collection.id)
      let secret = UnsafeRawBufferPointer(rebasing: bytes[read.secretOffset..<(read.secretOffset + record.secretCount)])
      let source = SecretSource.sent(maximumCount: secret.count) { destination in
        destination.copyMemory(from: secret)
        return secret.count
      }
      let placed = try writeItem(record, secret: source, replacing: nil)
      record.secretCount = placed.secretCount
      let item = StoredItem(record, block: placed.block, secretOffset: placed.secretOffset)
      collection.items[number] = item
      collection.index.insert(number, attributes: item.attributes)
      itemCount += 1
      let reference = ItemReference(collection: collection.name, item: number)
      scheduleExpiry(of: item, reference, previous: nil)
    }
  }
}
