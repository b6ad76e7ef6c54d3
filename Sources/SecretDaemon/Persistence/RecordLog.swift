// A durable, crash-consistent file of sealed records: appended, each append written and synced
// before it returns; read back whole or refused whole; compacted to the live records.
import SystemCalls
import TransferCrypto

/// An append-only log of sealed records (puts and deletes of items) in one file.
///
/// Every append is written and synced (`fdatasync`) before ``append(_:)`` returns; a new or
/// compacted file is synced, renamed into place and its folder synced. Opening recovers every
/// complete record: a torn tail (the last append cut short or not yet synced) is dropped and cut
/// off; damage before it refuses the file whole, which is left untouched. The log needs no key:
/// records are sealed by the caller (``DataKey/seal(_:as:kind:)``, or ``put(_:in:key:)``) and
/// opened with ``unseal(with:)``. One process holds a log at a time (`flock`). Not thread-safe:
/// the caller serialises calls, as the store's write lock does.
///
/// ```swift
/// let log = try RecordLog.create(at: folder + "/login.log", keyID: keyFile.keyID)
/// try log.put(secret, in: RecordSlot(collection: "login", item: 1), key: dataKey)
/// let reopened = try RecordLog.open(at: folder + "/login.log")
/// let items = try reopened.unseal(with: dataKey)
/// ```
package final class RecordLog {
  /// How long a log's lock is waited for before another holder is reported: a holder letting
  /// go (a log closed a moment ago, while a process we spawn has not yet exec'd and still holds
  /// a copy of its descriptor) is not another secretd.
  static let lockPatience = Duration.milliseconds(500)

  package let path: String
  /// The data key's id, as the key file names it.
  package let keyID: [UInt8]
  /// The latest put of every item not deleted since, by item.
  package private(set) var live: [RecordSlot: LogRecord] = [:]
  /// The delete of every item whose last record is a delete (until a compaction drops it).
  package private(set) var tombstones: [RecordSlot: LogRecord] = [:]
  /// The generation the next record must have.
  package private(set) var nextGeneration: UInt64
  /// The file's size in bytes.
  package internal(set) var size: Int
  /// The bytes of a torn tail that opening cut off (0 when the file ended cleanly).
  package let droppedTailBytes: Int

  var file: FileDescriptor
  /// Why the log takes no more records, after a write or sync it could not undo.
  var failure: String?

  init(path: String, file: FileDescriptor, scan: RecordLogFormat.Scan, droppedTailBytes: Int) {
    (self.path, self.file, self.keyID) = (path, file, scan.head.keyID)
    self.droppedTailBytes = droppedTailBytes
    size = scan.validEnd
    nextGeneration = max(scan.head.floor, (scan.records.last?.identity.generation ?? 0) + 1)
    for record in scan.records { apply(record) }
  }

  deinit { file.close() }

  /// The folder holding the log, and the log's name in it.
  var location: (directory: String, name: String) { Files.split(path) }

  /// Bytes the file would lose in a compaction: superseded puts, deletes, torn tails.
  package var reclaimableBytes: Int {
    let kept = live.values.reduce(RecordLogFormat.headSize) { total, record in
      total + (RecordLogFormat.frame(record)?.count ?? 0)
    }
    return size - kept
  }

  /// A new, empty log at `path` for the data key `keyID`: its head is written to a temporary
  /// file, synced, renamed into place, and the folder synced. Fails when a file is there.
  package static func create(at path: String, keyID: [UInt8]) throws(RecordLogError) -> RecordLog {
    guard !Files.exists(path) else { throw .exists(path: path) }
    let head = RecordLogFormat.Head(compactedCount: 0, keyID: keyID, floor: 1)
    let file = try writeReplacement(of: path, bytes: RecordLogFormat.encode(head))
    let scan = RecordLogFormat.Scan(head: head, records: [], validEnd: RecordLogFormat.headSize)
    return RecordLog(path: path, file: file, scan: scan, droppedTailBytes: 0)
  }

  /// The log at `path`, with every complete record. A torn tail is cut off (and the cut
  /// synced); damage anywhere before it throws ``RecordLogError/damaged(path:offset:reason:)``
  /// and leaves the file as it was.
  package static func open(at path: String) throws(RecordLogError) -> RecordLog {
    let file: FileDescriptor
    do { file = try FileDescriptor.open(path, .readWrite, options: .noFollow) } catch {
      if error == .noSuchFile { throw .noSuchLog(path: path) }
      throw .file(FileCallError(call: "open", path: path, errno: error))
    }
    do {
      do { try file.holdExclusively(patience: Self.lockPatience) } catch {
        if error == .wouldBlock { throw RecordLogError.inUse(path: path) }
        throw RecordLogError.file(FileCallError(call: "flock", path: path, errno: error))
      }
      let bytes: [UInt8]
      do { bytes = try file.readAll() } catch {
        throw RecordLogError.file(FileCallError(call: "read", path: path, errno: error))
      }
      let scan = try RecordLogFormat.scan(bytes, path: path)
      let dropped = bytes.count - scan.validEnd
      if dropped > 0 {
        do {
          try file.setSize(scan.validEnd)
          try file.syncData()
        } catch {
          throw RecordLogError.file(FileCallError(call: "ftruncate", path: path, errno: error))
        }
      }
      let (directory, name) = Files.split(path)
      try? Files.remove(temporaryPath(directory: directory, name: name))
      return RecordLog(path: path, file: file, scan: scan, droppedTailBytes: dropped)
    } catch {
      file.close()
      throw error as? RecordLogError ?? .broken(path: path, cause: "\(error)")
    }
  }

  /// Appends `record`, whose generation must be ``nextGeneration``: written at the end of the
  /// file and synced before this returns. On failure nothing is recorded in memory; a write that
  /// failed is cut back off, and a failed sync leaves the log refusing more records.
  package func append(_ record: LogRecord) throws(RecordLogError) {
    if let failure { throw .broken(path: path, cause: failure) }
    guard record.identity.generation == nextGeneration else {
      throw .invalidRecord("generation \(record.identity.generation), expected \(nextGeneration)")
    }
    guard record.kind == .put || live[record.identity.slot] != nil else {
      throw .invalidRecord("a delete of \(record.identity), which is not stored")
    }
    guard let frame = RecordLogFormat.frame(record) else {
      throw .invalidRecord("\(record.identity) too large for a record")
    }
    do {
      try frame.withRawBytes { (bytes) throws(Errno) in try file.writeAll(bytes, at: size) }
    } catch {
      // Cut off what part of the frame reached the file; if even that fails, stop here.
      do throws(Errno) { try file.setSize(size) } catch {
        failure = "a write that could not be cut back off (\(error))"
      }
      throw .file(FileCallError(call: "pwrite", path: path, errno: error))
    }
    do { try file.syncData() } catch {
      // After a failed fsync the page cache may say what the disk does not: trust neither.
      failure = "a failed fdatasync (\(error))"
      throw .file(FileCallError(call: "fdatasync", path: path, errno: error))
    }
    size += frame.count
    nextGeneration += 1
    apply(record)
  }

  private func apply(_ record: LogRecord) {
    let slot = record.identity.slot
    switch record.kind {
    case .put:
      live[slot] = record
      tombstones[slot] = nil
    case .delete:
      live[slot] = nil
      tombstones[slot] = record
    }
  }

  func removeTombstones() { tombstones = [:] }

  static func temporaryPath(directory: String, name: String) -> String { "\(directory)/.\(name).new" }

  /// Writes `bytes` to a new file beside `path`, syncs it, takes the log's hold on it, renames
  /// it over `path` and syncs the folder; returns it open for reading and writing.
  static func writeReplacement(of path: String, bytes: [UInt8]) throws(RecordLogError) -> FileDescriptor {
    let (directory, name) = Files.split(path)
    let temporary = temporaryPath(directory: directory, name: name)
    func failed(_ call: String, _ errno: Errno, at target: String = temporary) -> RecordLogError {
      .file(FileCallError(call: call, path: target, errno: errno))
    }
    try? Files.remove(temporary)
    let file: FileDescriptor
    do {
      file = try FileDescriptor.open(
        temporary, .readWrite, options: [.create, .exclusiveCreate, .noFollow], permissions: .ownerReadWrite)
    } catch { throw failed("open", error) }
    do throws(RecordLogError) {
      do { try bytes.withRawBytes { (raw) throws(Errno) in try file.writeAll(raw, at: 0) } } catch {
        throw failed("pwrite", error)
      }
      do { try file.sync() } catch { throw failed("fsync", error) }
      do { try file.holdExclusively(patience: Self.lockPatience) } catch { throw failed("flock", error) }
      do { try Files.move(temporary, to: path) } catch { throw RecordLogError.file(error) }
    } catch {
      file.close()
      try? Files.remove(temporary)
      throw error
    }
    if let error = Files.syncDirectory(directory) {
      file.close()
      throw failed("fsync of the folder", error, at: directory)
    }
    return file
  }
}
