// The records an arena holds, and their payloads' byte layout. Strings are UTF-8 with a u32
// length; an item's secret comes last, so that it is written in place and never copied out.
//
//   item        number, collection id, created, modified, expires (u64 each; expires
//               UInt64.max for never), then lengths (u32) of label, type, content type,
//               attribute count, secret length, then the texts, the attributes (name, value)
//               and the secret
//   collection  modified, locked (u64, in place), id, created (u64), name, label
//   aliases     count (u32), then per alias: collection id (u64), name

/// An item as the arena keeps it; the secret stays in the arena.
struct ItemRecord: Equatable {
  var number: UInt64
  var collectionID: UInt64
  var created: UInt64
  var modified: UInt64
  var expiresAt: UInt64?
  var label: String
  var type: String
  var contentType: String
  var attributes: [String: String]
  var secretCount: Int

  /// Bytes of the payload before the secret.
  var bytesBeforeSecret: Int {
    64 + label.utf8.count + type.utf8.count + contentType.utf8.count
      + attributes.reduce(0) { $0 + 8 + $1.key.utf8.count + $1.value.utf8.count }
  }

  var payloadCount: Int { bytesBeforeSecret + secretCount }

  func write(to writer: inout RecordWriter) {
    for value in [number, collectionID, created, modified, expiresAt ?? .max] { writer.append(value) }
    for count in [label.utf8.count, type.utf8.count, contentType.utf8.count, attributes.count, secretCount, 0] {
      writer.append(UInt32(count))
    }
    for text in [label, type, contentType] { writer.appendBytes(text) }
    for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
      writer.append(UInt32(name.utf8.count))
      writer.append(UInt32(value.utf8.count))
      writer.appendBytes(name)
      writer.appendBytes(value)
    }
  }

  /// Reads an item; `secretOffset` is where its secret starts in the payload.
  static func read(_ reader: inout RecordReader) throws(ArenaError) -> (record: ItemRecord, secretOffset: Int) {
    let (number, collectionID, created, modified, expires) = try (
      reader.counter(), reader.counter(), reader.u64(), reader.u64(), reader.u64()
    )
    let (labelCount, typeCount, contentTypeCount, attributeCount, secretCount, _) = try (
      reader.count(), reader.count(), reader.count(), reader.count(), reader.count(), reader.count()
    )
    let (label, type, contentType) = try (
      reader.text(labelCount), reader.text(typeCount), reader.text(contentTypeCount)
    )
    var attributes: [String: String] = [:]
    for _ in 0..<attributeCount {
      let (nameCount, valueCount) = try (reader.count(), reader.count())
      let name = try reader.text(nameCount)
      attributes[name] = try reader.text(valueCount)
    }
    let secretOffset = reader.offset
    try reader.skip(secretCount)
    try reader.expectEnd()
    let record = ItemRecord(
      number: number, collectionID: collectionID, created: created, modified: modified,
      expiresAt: expires == .max ? nil : expires, label: label, type: type, contentType: contentType,
      attributes: attributes, secretCount: secretCount)
    return (record, secretOffset)
  }
}

/// A collection as the arena keeps it.
struct CollectionRecord: Equatable {
  var modified: UInt64
  var locked: Bool
  var id: UInt64
  var created: UInt64
  var name: String
  var label: String

  var payloadCount: Int { 40 + name.utf8.count + label.utf8.count }

  func write(to writer: inout RecordWriter) {
    writer.append(ArenaLayout.LiveField.encoded(modified, field: Self.modifiedOffset))
    writer.append(ArenaLayout.LiveField.encoded(locked ? 1 : 0, field: Self.lockedOffset))
    for value in [id, created] { writer.append(value) }
    writer.append(UInt32(name.utf8.count))
    writer.append(UInt32(label.utf8.count))
    writer.appendBytes(name)
    writer.appendBytes(label)
  }

  /// `legacy`: its in-place fields may be layout 1's bare values.
  static func read(_ reader: inout RecordReader, legacy: Bool) throws(ArenaError) -> CollectionRecord {
    let (modifiedWord, lockedWord, id, created) = try (reader.u64(), reader.u64(), reader.counter(), reader.u64())
    guard let modified = ArenaLayout.LiveField.decoded(modifiedWord, field: modifiedOffset, legacy: legacy),
      let locked = ArenaLayout.LiveField.decoded(lockedWord, field: lockedOffset, legacy: legacy), locked <= 1
    else { throw .malformed("a collection's in-place field does not check out") }
    let (nameCount, labelCount) = try (reader.count(), reader.count())
    let record = CollectionRecord(
      modified: modified, locked: locked != 0, id: id, created: created, name: try reader.text(nameCount),
      label: try reader.text(labelCount))
    try reader.expectEnd()
    return record
  }

  /// Offsets of the fields written in place.
  static let modifiedOffset = 0
  static let lockedOffset = 8
}

/// Every alias, as one record: alias name → collection id.
struct AliasesRecord: Equatable {
  var aliases: [String: UInt64]

  var payloadCount: Int { 4 + aliases.reduce(0) { $0 + 12 + $1.key.utf8.count } }

  func write(to writer: inout RecordWriter) {
    writer.append(UInt32(aliases.count))
    for (name, id) in aliases.sorted(by: { $0.key < $1.key }) {
      writer.append(id)
      writer.append(UInt32(name.utf8.count))
      writer.appendBytes(name)
    }
  }

  static func read(_ reader: inout RecordReader) throws(ArenaError) -> AliasesRecord {
    var aliases: [String: UInt64] = [:]
    for _ in 0..<(try reader.count()) {
      let id = try reader.counter()
      aliases[try reader.text(try reader.count())] = id
    }
    try reader.expectEnd()
    return AliasesRecord(aliases: aliases)
  }
}

/// Appends a record's fields to a payload in the arena.
struct RecordWriter {
  let bytes: UnsafeMutableRawBufferPointer
  private(set) var offset = 0

  init(_ bytes: UnsafeMutableRawBufferPointer) { self.bytes = bytes }

  mutating func append(_ value: UInt64) {
    bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    offset += 8
  }

  mutating func append(_ value: UInt32) {
    bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    offset += 4
  }

  mutating func appendBytes(_ text: String) {
    for byte in text.utf8 {
      bytes[offset] = byte
      offset += 1
    }
  }
}

/// Reads a record's fields, every read checked against the payload's end.
struct RecordReader {
  let bytes: UnsafeRawBufferPointer
  private(set) var offset = 0

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  private mutating func take(_ count: Int) throws(ArenaError) -> UnsafeRawBufferPointer {
    guard count >= 0, count <= bytes.count - offset else { throw .malformed("a field runs past its record") }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
  }

  mutating func u64() throws(ArenaError) -> UInt64 {
    UInt64(littleEndian: try take(8).loadUnaligned(as: UInt64.self))
  }

  /// An item number or collection id, at most ``ArenaLayout/largestCounter``.
  mutating func counter() throws(ArenaError) -> UInt64 {
    let value = try u64()
    guard value <= ArenaLayout.largestCounter else { throw .malformed("a number out of range (\(value))") }
    return value
  }

  mutating func count() throws(ArenaError) -> Int {
    Int(UInt32(littleEndian: try take(4).loadUnaligned(as: UInt32.self)))
  }

  mutating func text(_ count: Int) throws(ArenaError) -> String {
    let raw = try take(count)
    guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("a text is not UTF-8") }
    return text
  }

  mutating func skip(_ count: Int) throws(ArenaError) { _ = try take(count) }

  func expectEnd() throws(ArenaError) {
    guard offset == bytes.count else { throw .malformed("\(bytes.count - offset) bytes after the record's end") }
  }
}
