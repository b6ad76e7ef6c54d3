// Compaction: the live records rewritten to a new file, synced, renamed over the log and the
// folder synced, so the file tracks the live items, not their history. No key is needed: the
// sealed payloads are copied as they are, with their generations.
import SystemCalls

extension RecordLog {
  /// Rewrites the log with only its live records (oldest first) under a head that names them
  /// compacted and sets the generation floor to ``nextGeneration``. A crash at any point
  /// leaves the old file or the new one, each whole. When the folder's sync fails the file is
  /// in place but the log takes no more records until opened again.
  package func compact() throws(RecordLogError) {
    if let failure { throw .broken(path: path, cause: failure) }
    let kept = live.values.sorted { $0.identity.generation < $1.identity.generation }
    let head = RecordLogFormat.Head(compactedCount: UInt32(kept.count), keyID: keyID, floor: nextGeneration)
    var bytes = RecordLogFormat.encode(head)
    for record in kept {
      guard let frame = RecordLogFormat.frame(record) else {
        throw .invalidRecord("\(record.identity) too large for a record")
      }
      bytes += frame
    }
    let replacement: FileDescriptor
    do { replacement = try Self.writeReplacement(of: path, bytes: bytes) } catch {
      if case .file(let call) = error, call.call == "fsync of the folder" {
        failure = "a compaction whose folder sync failed (\(call.errno))"
      }
      throw error
    }
    file.close()
    file = replacement
    size = bytes.count
    removeTombstones()
  }
}
