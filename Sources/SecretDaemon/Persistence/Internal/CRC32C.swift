// CRC-32C (Castagnoli): the record log's check against torn and damaged bytes. Not a defence
// against someone who edits the file on purpose; the records' GCM tags are.

enum CRC32C {
  private static let table: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1 }
    return value
  }

  /// The checksum of `bytes` (RFC 3720's CRC-32C: reflected, initial and final XOR all ones).
  static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    return crc ^ 0xFFFF_FFFF
  }
}
