// The arena's layout, version 1: a header page, then blocks that tile the rest of the arena.
// Every number is little-endian. Knows nothing of D-Bus or of the store's types.
//
//   header (4096 bytes)
//     0  magic "secretd\0"        8  layout version (u32)     12 header size (u32)
//     16 arena size (u64)         24 created, unix seconds    32 checksum of bytes 0..<32
//     40 next item number (u64)   48 next collection id (u64)   (both written in place)
//   block (16-byte aligned, at least 32 bytes)
//     0  state | kind << 8 | size << 16 (u64, written in one store: the commit point)
//     8  sequence (u64)           16 checksum (u64)           24 payload length (u32)
//     32 payload; a collection's first 16 bytes (modified, locked) are written in place and
//        left out of its checksum

/// Where things are in an arena, and the one checksum every record carries.
enum ArenaLayout {
  static let magic: UInt64 = 0x0064_7465_7263_6573  // "secretd\0"
  static let version: UInt32 = 1
  static let headerSize = 4096
  static let blockHeaderSize = 32
  static let alignment = 16

  enum HeaderField {
    static let magic = 0
    static let version = 8
    static let headerSize = 12
    static let arenaSize = 16
    static let created = 24
    static let checksum = 32
    static let nextItemNumber = 40
    static let nextCollectionID = 48
    /// The bytes the header's checksum covers.
    static let checked = 32
  }

  enum BlockField {
    static let word = 0
    static let sequence = 8
    static let checksum = 16
    static let payloadLength = 24
  }

  /// A block's state, the low byte of its first word.
  enum BlockState: UInt8 {
    /// Free space: no secret byte is left in it.
    case free = 0
    /// Being written, or free space whose old bytes are not yet wiped: discarded and wiped on recovery.
    case dirty = 1
    /// A complete record.
    case committed = 2
  }

  /// What a committed block holds, the second byte of its first word.
  enum RecordKind: UInt8 {
    case none = 0
    case collection = 1
    case item = 2
    case aliases = 3

    /// Bytes at the start of the payload that are written in place and left out of the checksum.
    var liveBytes: Int { self == .collection ? 16 : 0 }
  }

  static func word(_ state: BlockState, _ kind: RecordKind, size: Int) -> UInt64 {
    UInt64(state.rawValue) | UInt64(kind.rawValue) << 8 | UInt64(size) << 16
  }

  /// `count` rounded up to the alignment.
  static func aligned(_ count: Int) -> Int { (count + alignment - 1) / alignment * alignment }

  /// The size of a block holding `payload` bytes.
  static func blockSize(payload: Int) -> Int { aligned(blockHeaderSize + payload) }

  /// A 64-bit checksum of `bytes` after `seed`: every byte counts, in order (FNV-1a over 8-byte
  /// words, then a final mix). It finds torn or damaged records, not forgeries: only secretd
  /// writes its arena.
  static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
    let prime: UInt64 = 0x0000_0100_0000_01b3
    var index = 0
    while index + 8 <= bytes.count {
      hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* prime
      index += 8
    }
    while index < bytes.count {
      hash = (hash ^ UInt64(bytes[index])) &* prime
      index += 1
    }
    hash ^= UInt64(bytes.count)
    hash = (hash ^ (hash >> 33)) &* 0xff51_afd7_ed55_8ccd
    return hash ^ (hash >> 33)
  }
}
