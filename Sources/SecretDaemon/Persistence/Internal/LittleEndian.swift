// The byte layout of the key file and the record log: fixed-width little-endian integers and
// length-prefixed fields, written and read with bounds checked (a reader never traps).

/// Appends fields to a byte array.
struct LittleEndianWriter {
  var bytes: [UInt8] = []

  mutating func write<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func write(_ raw: some Collection<UInt8>) { bytes.append(contentsOf: raw) }

  /// A UTF-8 string after its length as a UInt16; nil when it is longer than 65,535 bytes.
  mutating func writeShortString(_ text: String) -> Bool {
    let utf8 = Array(text.utf8)
    guard utf8.count <= Int(UInt16.max) else { return false }
    write(UInt16(utf8.count))
    write(utf8)
    return true
  }
}

/// Reads fields from bytes in order; every read returns nil past the end.
struct LittleEndianReader {
  let bytes: ArraySlice<UInt8>
  private(set) var position: Int

  init(_ bytes: ArraySlice<UInt8>) {
    self.bytes = bytes
    position = bytes.startIndex
  }

  var remaining: Int { bytes.endIndex - position }
  var isAtEnd: Bool { position == bytes.endIndex }

  mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
    guard let raw = read(count: MemoryLayout<T>.size) else { return nil }
    var value: T = 0
    for (index, byte) in raw.enumerated() { value |= T(truncatingIfNeeded: byte) << (index * 8) }
    return value
  }

  mutating func read(count: Int) -> ArraySlice<UInt8>? {
    guard count >= 0, count <= remaining else { return nil }
    defer { position += count }
    return bytes[position..<(position + count)]
  }

  /// The rest of the bytes.
  mutating func readRest() -> ArraySlice<UInt8> {
    defer { position = bytes.endIndex }
    return bytes[position...]
  }

  /// A string written by ``LittleEndianWriter/writeShortString(_:)``; nil when cut short or not UTF-8.
  mutating func readShortString() -> String? {
    guard let count = read(UInt16.self), let raw = read(count: Int(count)) else { return nil }
    return String(validating: raw, as: UTF8.self)
  }
}
