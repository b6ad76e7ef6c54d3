// What a sealed record is: which item of which collection, at which generation, put or deleted.
// All of it is the associated data of the record's seal, so a record moved to another item or
// collection, replayed at another generation, or turned from a put into a delete fails to open.

/// Whether a record stores an item or says it is gone.
package enum RecordKind: UInt8, Sendable {
  case put = 1
  case delete = 2
}

/// Which record a sealed payload belongs to: bound into its seal as associated data.
package struct RecordIdentity: Hashable, Sendable, CustomStringConvertible {
  /// The collection's name (`login`).
  package var collection: String
  /// The item's number within the collection; what the number means is the store's matter.
  package var item: UInt64
  /// The record's place in its log: every record of a log has a larger one than the last.
  package var generation: UInt64

  package init(collection: String, item: UInt64, generation: UInt64) {
    (self.collection, self.item, self.generation) = (collection, item, generation)
  }

  /// The item a record is about, whatever its generation.
  package var slot: RecordSlot { RecordSlot(collection: collection, item: item) }

  package var description: String { "item \(item) of collection \(collection) (generation \(generation))" }

  /// The associated data of a record of `kind` with this identity: a domain tag, the kind, the
  /// collection's name after its length, the item and the generation.
  func associatedData(kind: RecordKind) -> [UInt8] {
    var writer = LittleEndianWriter()
    writer.write(Array("secretd record 1".utf8))
    writer.write(kind.rawValue)
    writer.write(UInt32(collection.utf8.count))
    writer.write(Array(collection.utf8))
    writer.write(item)
    writer.write(generation)
    return writer.bytes
  }
}

/// One item of one collection: what a put replaces and a delete removes.
package struct RecordSlot: Hashable, Sendable {
  package var collection: String
  package var item: UInt64

  package init(collection: String, item: UInt64) { (self.collection, self.item) = (collection, item) }
}
