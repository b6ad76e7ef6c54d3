// Sealed records in and out of a log with the data key: put and delete seal and append;
// unseal opens every live record, or refuses the log whole.
package import SecretMemory
package import TransferCrypto

extension RecordLog {
  /// Seals `plaintext` as the next generation of `slot` and appends it (synced on return).
  package func put(_ plaintext: SecretBytes, in slot: RecordSlot, key: DataKey) throws(RecordLogError) {
    let identity = RecordIdentity(collection: slot.collection, item: slot.item, generation: nextGeneration)
    let sealed: [UInt8]
    do { sealed = try key.seal(plaintext, as: identity, kind: .put) } catch {
      throw .sealing(path: path, record: "\(identity)", error)
    }
    try append(LogRecord(kind: .put, identity: identity, sealed: sealed))
  }

  /// Seals the bytes at `plaintext` (read in place) as the next generation of `slot` and
  /// appends them (synced on return).
  package func put(_ plaintext: UnsafeRawBufferPointer, in slot: RecordSlot, key: DataKey) throws(RecordLogError) {
    let identity = RecordIdentity(collection: slot.collection, item: slot.item, generation: nextGeneration)
    let sealed: [UInt8]
    do { sealed = try key.seal(plaintext, associatedData: identity.associatedData(kind: .put)) } catch {
      throw .sealing(path: path, record: "\(identity)", error)
    }
    try append(LogRecord(kind: .put, identity: identity, sealed: sealed))
  }

  /// Appends a sealed delete of `slot` (synced on return).
  package func delete(_ slot: RecordSlot, key: DataKey) throws(RecordLogError) {
    let identity = RecordIdentity(collection: slot.collection, item: slot.item, generation: nextGeneration)
    let sealed: [UInt8]
    do { sealed = try key.seal(SecretBytes(count: 0), as: identity, kind: .delete) } catch {
      throw .sealing(path: path, record: "\(identity)", error)
    }
    try append(LogRecord(kind: .delete, identity: identity, sealed: sealed))
  }

  /// Every live item's plaintext, in locked memory, after checking every live put's seal and
  /// every delete's still in the file. One record that does not open refuses them all.
  package func unseal(with key: DataKey) throws(RecordLogError) -> [RecordSlot: SecretBytes] {
    for record in tombstones.values {
      do { _ = try key.open(record.sealed, as: record.identity, kind: .delete) } catch {
        throw .sealing(path: path, record: "the delete of \(record.identity)", error)
      }
    }
    var opened: [RecordSlot: SecretBytes] = [:]
    for (slot, record) in live {
      do { opened[slot] = try key.open(record.sealed, as: record.identity, kind: .put) } catch {
        throw .sealing(path: path, record: "\(record.identity)", error)
      }
    }
    return opened
  }
}
