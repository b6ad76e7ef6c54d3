// The record log's bytes, and how a log that a crash may have cut short is read back.
//
// Layout, version 1 (integers little-endian):
//   head (48): "SECRETDL" | version u16 | flags u16 | compacted count u32 | key id (16)
//              | generation floor u64 | reserved u32 | CRC-32C u32 of the 44 bytes before
//   frames:    body length u32 | body CRC-32C u32 | CRC-32C u32 of the 8 bytes before | body
//   body:      kind u8 | generation u64 | item u64 | collection length u16 | collection (UTF-8)
//              | sealed payload (nonce 12, ciphertext, tag 16)
// The first `compacted count` records are those a compaction kept, with generations below the
// floor; every later one has a generation at or above it; generations only grow.
//
// Reading it back: only the last append can be unsynced, so only the last frame can be torn,
// and a power cut may leave it cut short, or with zeros or garbage where its pages did not reach
// the disk. A frame cut short, a last frame whose body fails its check, or a frame header that
// fails its check with no whole frame anywhere after it is a torn tail, dropped; any other
// failure (a frame header that fails its check with a whole frame after it, a body that fails
// its check with frames after it, a record that breaks the rules above) is damage, and the log
// is refused. A change inside the last record alone looks like a torn append, and is dropped.
import TransferCrypto

enum RecordLogFormat {
  static let magic = Array("SECRETDL".utf8)
  static let version: UInt16 = 1
  static let headSize = 48
  static let frameHeaderSize = 12
  /// The largest body a frame may claim: a record of a 16 MiB secret and then some.
  static let maximumBody = 64 * 1024 * 1024
  static let minimumBody = 1 + 8 + 8 + 2 + DataKey.sealOverhead

  struct Head: Equatable {
    var compactedCount: UInt32
    var keyID: [UInt8]
    var floor: UInt64
  }

  /// What reading a log's bytes found.
  struct Scan {
    var head: Head
    var records: [LogRecord]
    /// Where the last complete record ends; the bytes after it are a torn tail.
    var validEnd: Int
  }

  static func encode(_ head: Head) -> [UInt8] {
    var writer = LittleEndianWriter()
    writer.write(magic)
    writer.write(version)
    writer.write(UInt16(0))
    writer.write(head.compactedCount)
    writer.write(head.keyID)
    writer.write(head.floor)
    writer.write(UInt32(0))
    writer.write(CRC32C.checksum(writer.bytes))
    return writer.bytes
  }

  /// A record's frame; nil when its collection's name is too long.
  static func frame(_ record: LogRecord) -> [UInt8]? {
    var body = LittleEndianWriter()
    body.write(record.kind.rawValue)
    body.write(record.identity.generation)
    body.write(record.identity.item)
    guard body.writeShortString(record.identity.collection) else { return nil }
    body.write(record.sealed)
    guard body.bytes.count <= maximumBody else { return nil }
    var frame = LittleEndianWriter()
    frame.write(UInt32(body.bytes.count))
    frame.write(CRC32C.checksum(body.bytes))
    frame.write(CRC32C.checksum(frame.bytes))
    frame.write(body.bytes)
    return frame.bytes
  }

  /// Reads a whole log: its records up to a torn tail, or the first damage found.
  static func scan(_ bytes: [UInt8], path: String) throws(RecordLogError) -> Scan {
    func damaged(_ offset: Int, _ reason: String) -> RecordLogError {
      .damaged(path: path, offset: offset, reason: reason)
    }
    guard bytes.count >= headSize, bytes.starts(with: magic) else { throw damaged(0, "no SECRETDL head") }
    var reader = LittleEndianReader(bytes[..<headSize])
    _ = reader.read(count: magic.count)
    guard let version = reader.read(UInt16.self), let flags = reader.read(UInt16.self),
      let compacted = reader.read(UInt32.self), let keyID = reader.read(count: 16),
      let floor = reader.read(UInt64.self),
      let reserved = reader.read(UInt32.self), let check = reader.read(UInt32.self)
    else { throw damaged(0, "head cut short") }
    guard check == CRC32C.checksum(bytes[..<(headSize - 4)]) else { throw damaged(0, "head checksum mismatch") }
    guard version == self.version else { throw .unsupportedVersion(path: path, version: version) }
    guard flags == 0, reserved == 0 else { throw damaged(0, "unknown flags") }
    let head = Head(compactedCount: compacted, keyID: Array(keyID), floor: floor)

    var records: [LogRecord] = []
    var offset = headSize
    scanning: while offset < bytes.count {
      let remaining = bytes.count - offset
      guard remaining >= frameHeaderSize else { break scanning }
      var frameReader = LittleEndianReader(bytes[offset..<(offset + frameHeaderSize)])
      guard let length = frameReader.read(UInt32.self), let bodyCheck = frameReader.read(UInt32.self),
        let headerCheck = frameReader.read(UInt32.self)
      else { break scanning }
      guard headerCheck == CRC32C.checksum(bytes[offset..<(offset + 8)]) else {
        // An unsynced append whose header did not reach the disk whole (zeros where the file
        // was extended first, garbage where its pages were not written) has nothing after it.
        if !holdsWholeFrame(bytes, after: offset) { break scanning }
        throw damaged(offset, "frame header checksum mismatch")
      }
      guard (minimumBody...maximumBody).contains(Int(length)) else {
        throw damaged(offset, "a frame of \(length) bytes")
      }
      let end = offset + frameHeaderSize + Int(length)
      guard end <= bytes.count else { break scanning }
      let body = bytes[(offset + frameHeaderSize)..<end]
      guard CRC32C.checksum(body) == bodyCheck else {
        if end == bytes.count { break scanning }
        throw damaged(offset, "record checksum mismatch")
      }
      guard let record = decodeBody(body) else { throw damaged(offset, "unreadable record") }
      try checkOrder(record, after: records.last, index: records.count, head: head, offset: offset, path: path)
      records.append(record)
      offset = end
    }
    guard records.count >= Int(head.compactedCount) else {
      throw damaged(offset, "\(head.compactedCount) compacted records announced, \(records.count) found")
    }
    return Scan(head: head, records: records, validEnd: offset)
  }

  /// Whether a whole frame (a header and a body that pass their checks) starts anywhere after
  /// `offset`: bytes a torn append cannot have left.
  private static func holdsWholeFrame(_ bytes: [UInt8], after offset: Int) -> Bool {
    var start = offset + 1
    while start + frameHeaderSize + minimumBody <= bytes.count {
      defer { start += 1 }
      var reader = LittleEndianReader(bytes[start..<(start + frameHeaderSize)])
      guard let length = reader.read(UInt32.self), let bodyCheck = reader.read(UInt32.self),
        let headerCheck = reader.read(UInt32.self), headerCheck == CRC32C.checksum(bytes[start..<(start + 8)]),
        (minimumBody...maximumBody).contains(Int(length))
      else { continue }
      let end = start + frameHeaderSize + Int(length)
      if end <= bytes.count, CRC32C.checksum(bytes[(start + frameHeaderSize)..<end]) == bodyCheck { return true }
    }
    return false
  }

  static func decodeBody(_ body: ArraySlice<UInt8>) -> LogRecord? {
    var reader = LittleEndianReader(body)
    guard let rawKind = reader.read(UInt8.self), let kind = RecordKind(rawValue: rawKind),
      let generation = reader.read(UInt64.self), let item = reader.read(UInt64.self),
      let collection = reader.readShortString()
    else { return nil }
    let sealed = Array(reader.readRest())
    guard sealed.count >= DataKey.sealOverhead, kind == .put || sealed.count == DataKey.sealOverhead else {
      return nil
    }
    return LogRecord(
      kind: kind, identity: RecordIdentity(collection: collection, item: item, generation: generation), sealed: sealed)
  }

  /// Generations only grow; compacted records lie below the floor, later ones at or above it.
  private static func checkOrder(
    _ record: LogRecord, after previous: LogRecord?, index: Int, head: Head, offset: Int, path: String
  ) throws(RecordLogError) {
    let generation = record.identity.generation
    if let previous, generation <= previous.identity.generation {
      throw .damaged(
        path: path, offset: offset,
        reason: "generation \(generation) after \(previous.identity.generation): a record replayed or reordered")
    }
    let isCompacted = index < Int(head.compactedCount)
    if isCompacted != (generation < head.floor) {
      throw .damaged(
        path: path, offset: offset,
        reason: "generation \(generation) \(isCompacted ? "at or above" : "below") the floor \(head.floor)")
    }
  }
}
