// The arena's layout, version 2: a header page, then blocks that tile the rest of the arena.
// Every number is little-endian; every field read back is inside a checksum or a check. Knows
// nothing of D-Bus or of the store's types.
//
//   header (4096 bytes)
//     0  magic "secretd\0"        8  layout version (u32)     12 header size (u32)
//     16 arena size (u64)         24 created, unix seconds    32 checksum of bytes 0..<32
//     40 counters A: next item number, next collection id (u64 each), their checksum (u64)
//     64 counters B: the same, written after A, so one of them is whole whatever a crash tears
//   block (16-byte aligned, at least 32 bytes)
//     0  the block word (u64, written in one store: the commit point; see BlockWord)
//     8  sequence (u64)           16 checksum (u64)           24 payload length (u32)
//     32 payload; a collection's first 16 bytes (modified, locked) are written in place, each
//        with a check of its own (see LiveField), and left out of the record's checksum
//
// Layout 1 had the counters at 40 and 48 with no checksum, and block words and in-place fields
// with no check; an arena of layout 1 is checked as before, then converted in place when opened.

/// Where things are in an arena, and the one checksum every record carries.
enum ArenaLayout {
  static let magic: UInt64 = 0x0064_7465_7263_6573  // "secretd\0"
  static let version: UInt32 = 2
  /// The layout before block words and counters were checked; opened and converted.
  static let legacyVersion: UInt32 = 1
  /// The largest item number or collection id an arena may hold: far beyond what any store
  /// reaches, and far from where arithmetic on them could overflow.
  static let largestCounter: UInt64 = 1 << 48
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
    /// The two copies of the counters, each 24 bytes.
    static let counterSlots = [40, 64]
    /// Layout 1's counters, unchecked.
    static let legacyNextItemNumber = 40
    static let legacyNextCollectionID = 48
    /// The bytes the header's checksum covers.
    static let checked = 32
  }

  enum BlockField {
    static let word = 0
    static let sequence = 8
    static let checksum = 16
    static let payloadLength = 24
  }

  /// A block's state.
  enum BlockState: UInt8 {
    /// Free space: no secret byte is left in it.
    case free = 0
    /// Being written, or free space whose old bytes are not yet wiped: discarded and wiped on recovery.
    case dirty = 1
    /// A complete record.
    case committed = 2
  }

  /// What a committed block holds.
  enum RecordKind: UInt8 {
    case none = 0
    case collection = 1
    case item = 2
    case aliases = 3

    /// Bytes at the start of the payload that are written in place and left out of the checksum.
    var liveBytes: Int { self == .collection ? 16 : 0 }
  }

  /// A block's first word. Layout 2: the low byte is 0xA << 4 | kind << 2 | state, the next five
  /// bytes the size in 16-byte units, the top two a check of those six bytes and of the block's
  /// offset, so that no damaged word is taken for another. Layout 1: state | kind << 8 |
  /// size << 16, unchecked (its low byte's high nibble is always 0).
  struct BlockWord: Equatable {
    var state: BlockState
    var kind: RecordKind
    var size: Int

    private static let tag: UInt64 = 0xA

    func encoded(at offset: Int) -> UInt64 {
      let low =
        Self.tag << 4 | UInt64(kind.rawValue) << 2 | UInt64(state.rawValue)
        | UInt64(size / ArenaLayout.alignment) << 8
      return low | UInt64(Self.check(low, at: offset)) << 48
    }

    /// The word at `offset`; nil when it does not check out (or is of layout 1 and `legacy` is false).
    init?(decoding word: UInt64, at offset: Int, legacy: Bool) {
      let low = word & 0xFFFF_FFFF_FFFF
      if word & 0xF0 == Self.tag << 4 {
        guard UInt16(word >> 48) == Self.check(low, at: offset),
          let state = BlockState(rawValue: UInt8(word & 0x3)), let kind = RecordKind(rawValue: UInt8(word >> 2 & 0x3))
        else { return nil }
        (self.state, self.kind, size) = (state, kind, Int(low >> 8) * ArenaLayout.alignment)
      } else {
        guard legacy, word & 0xF0 == 0, let state = BlockState(rawValue: UInt8(word & 0xFF)),
          let kind = RecordKind(rawValue: UInt8(word >> 8 & 0xFF))
        else { return nil }
        (self.state, self.kind, size) = (state, kind, Int(word >> 16))
      }
    }

    init(_ state: BlockState, _ kind: RecordKind, size: Int) {
      (self.state, self.kind, self.size) = (state, kind, size)
    }

    /// The size a layout-2 word gives, unchecked: for words this process wrote.
    static func size(of word: UInt64) -> Int { Int((word & 0xFFFF_FFFF_FFFF) >> 8) * ArenaLayout.alignment }

    private static func check(_ low: UInt64, at offset: Int) -> UInt16 {
      withUnsafeBytes(of: low.littleEndian) { bytes in
        UInt16(truncatingIfNeeded: checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<6]), seed: UInt64(offset)))
      }
    }
  }

  /// A field written in place, outside its record's checksum (a collection's modified time and
  /// lock). Layout 2: the value in the low six bytes, a 16-bit check of them and of the field's
  /// place in the top two; each is one aligned store, so a crash never tears it, and damage is
  /// found. Layout 1 kept the bare value.
  enum LiveField {
    static func encoded(_ value: UInt64, field: Int) -> UInt64 {
      let low = min(value, 0xFFFF_FFFF_FFFF)
      return low | UInt64(check(low, field: field)) << 48
    }

    /// The value; nil when it does not check out. `legacy` also takes a bare value.
    static func decoded(_ word: UInt64, field: Int, legacy: Bool) -> UInt64? {
      let low = word & 0xFFFF_FFFF_FFFF
      if legacy && word >> 48 == 0 { return low }
      return UInt16(word >> 48) == check(low, field: field) ? low : nil
    }

    private static func check(_ low: UInt64, field: Int) -> UInt16 {
      withUnsafeBytes(of: low.littleEndian) { bytes in
        UInt16(
          truncatingIfNeeded: checksum(
            UnsafeRawBufferPointer(rebasing: bytes[0..<6]), seed: 0x4C49_5645 ^ UInt64(field)))
      }
    }
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
