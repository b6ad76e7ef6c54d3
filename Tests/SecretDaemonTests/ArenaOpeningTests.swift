// Opening an arena that a crash, damage, a crafted file or an older secretd left: it is served
// whole or refused whole, never in part, and nothing in it can make secretd trap.
import Foundation
import SystemCalls
import Testing

@testable import SecretDaemon

@Suite("opening an arena")
struct ArenaOpeningTests {
  /// A store with two collections, aliases and items of each, its arena held by the test.
  static func filledStore() throws -> Store {
    let store = try makeStore()
    let other = try store.createCollection(label: "Other", alias: "", named: "other")
    for (index, collection) in ["session", other, "session"].enumerated() {
      _ = try store.createItem(
        in: collection, label: "item \(index)", attributes: ["n": "\(index)"], contentType: "text/plain",
        secret: sent(Array("secret \(index)".utf8)), replace: false)
    }
    return store
  }

  /// A copy of `arena`'s memory, as a crash would leave it.
  static func copy(_ arena: Arena) throws -> ArenaMemory {
    let copy = try ArenaMemory.make(size: arena.size, preferSecret: false, allowUnlocked: true)
    copy.base.copyMemory(from: arena.memory.base, byteCount: arena.size)
    return copy
  }

  /// Each item's attributes and secret, as an opened arena holds them.
  static func held(_ memory: ArenaMemory) throws -> [[String: String]: [UInt8]] {
    let (_, contents) = try Arena.open(memory, isValidName: Store.isValidName)
    var held: [[String: String]: [UInt8]] = [:]
    for (found, secretOffset) in contents.items {
      let start = memory.base + found.offset + ArenaLayout.blockHeaderSize + secretOffset
      held[found.record.attributes] = Array(UnsafeRawBufferPointer(start: start, count: found.record.secretCount))
    }
    return held
  }

  static func blocks(of memory: ArenaMemory) -> [(offset: Int, word: ArenaLayout.BlockWord)] {
    var blocks: [(Int, ArenaLayout.BlockWord)] = []
    var offset = ArenaLayout.headerSize
    while offset < memory.size {
      let raw = memory.base.load(fromByteOffset: offset, as: UInt64.self)
      guard let word = ArenaLayout.BlockWord(decoding: raw, at: offset, legacy: true), word.size > 0 else { break }
      blocks.append((offset, word))
      offset += word.size
    }
    return blocks
  }

  /// Rewrites `memory` as layout 1 left it: unchecked words, counters with no checksum; the first
  /// `converted` words stay of layout 2, and the header says `version`, as a conversion cut
  /// short leaves it.
  static func downgrade(_ memory: ArenaMemory, converted: Int = 0, version: UInt32 = ArenaLayout.legacyVersion) {
    for (offset, word) in blocks(of: memory).dropFirst(converted) {
      let legacy = UInt64(word.state.rawValue) | UInt64(word.kind.rawValue) << 8 | UInt64(word.size) << 16
      memory.base.storeBytes(of: legacy.littleEndian, toByteOffset: offset, as: UInt64.self)
      guard word.state == .committed, word.kind == .collection else { continue }
      for field in [CollectionRecord.modifiedOffset, CollectionRecord.lockedOffset] {
        let place = offset + ArenaLayout.blockHeaderSize + field
        let bare = memory.base.load(fromByteOffset: place, as: UInt64.self) & 0xFFFF_FFFF_FFFF
        memory.base.storeBytes(of: bare, toByteOffset: place, as: UInt64.self)
      }
    }
    memset(memory.base + 56, 0, 32)  // counter A's checksum and counter B: layout 1 had neither
    let header = UnsafeMutableRawBufferPointer(start: memory.base, count: ArenaLayout.headerSize)
    header.storeBytes(
      of: ArenaLayout.legacyVersion.littleEndian, toByteOffset: ArenaLayout.HeaderField.version, as: UInt32.self)
    header.storeBytes(
      of: Arena.headerChecksum(header).littleEndian, toByteOffset: ArenaLayout.HeaderField.checksum, as: UInt64.self)
    header.storeBytes(of: version.littleEndian, toByteOffset: ArenaLayout.HeaderField.version, as: UInt32.self)
  }

  static func version(of memory: ArenaMemory) -> UInt32 {
    memory.base.load(fromByteOffset: ArenaLayout.HeaderField.version, as: UInt32.self)
  }

  @Test("an arena of layout 1 (secretd before this one) is served whole and converted to layout 2 in place")
  func aLayoutOneArenaIsServedAndConverted() throws {
    let store = try Self.filledStore()
    let expected = try Self.held(try Self.copy(store.arena))
    #expect(expected.count == 3)
    let old = try Self.copy(store.arena)
    Self.downgrade(old)
    #expect(Self.version(of: old) == 1)
    let checked = Self.blocks(of: old).filter { block in
      let raw = old.base.load(fromByteOffset: block.offset, as: UInt64.self)
      return ArenaLayout.BlockWord(decoding: raw, at: block.offset, legacy: false) != nil
    }
    #expect(checked.isEmpty)
    #expect(try Self.held(old) == expected)
    #expect(Self.version(of: old) == ArenaLayout.version)
    for (offset, _) in Self.blocks(of: old) {
      let raw = old.base.load(fromByteOffset: offset, as: UInt64.self)
      #expect(ArenaLayout.BlockWord(decoding: raw, at: offset, legacy: false) != nil, "word at \(offset)")
    }
    #expect(try Self.held(old) == expected)
  }

  @Test(
    "a conversion cut short after any word, or between the header's version and its checksum, opens whole",
    arguments: [0, 1, 2, 3, 5, 8, Int.max])
  func aConversionCutShortOpensWhole(wordsConverted: Int) throws {
    let store = try Self.filledStore()
    let expected = try Self.held(try Self.copy(store.arena))
    let cut = try Self.copy(store.arena)
    Self.downgrade(cut, converted: wordsConverted)
    #expect(try Self.held(cut) == expected)
    let torn = try Self.copy(store.arena)
    Self.downgrade(torn, version: ArenaLayout.version)
    #expect(try Self.held(torn) == expected)
  }

  @Test("a block word with any one byte changed is refused, the whole arena with it, never served in part")
  func aDamagedBlockWordIsRefused() throws {
    let store = try Self.filledStore()
    let pristine = try Self.copy(store.arena)
    #expect(try Self.held(pristine).count == 3)  // positive control
    var tried = 0
    for (offset, _) in Self.blocks(of: pristine) {
      for byte in 0..<8 {
        for change: UInt8 in [0x01, 0x80, 0xFF] {
          let damaged = try Self.copy(store.arena)
          damaged.base.storeBytes(
            of: damaged.base.load(fromByteOffset: offset + byte, as: UInt8.self) ^ change, toByteOffset: offset + byte,
            as: UInt8.self)
          #expect(throws: ArenaError.self, "byte \(byte) of the word at \(offset) ^ \(change)") {
            try Arena.open(damaged, isValidName: Store.isValidName)
          }
          tried += 1
        }
      }
    }
    #expect(tried >= 5 * 24)
  }

  @Test("counters out of range are refused as damage, not trapped on; a torn copy of them gives way to the other")
  func headerCountersAreCheckedAndBounded() throws {
    let store = try Self.filledStore()
    func setCounters(_ memory: ArenaMemory, _ value: UInt64, slots: [Int], checksum: Bool) {
      for slot in slots {
        memory.base.storeBytes(of: value, toByteOffset: slot, as: UInt64.self)
        memory.base.storeBytes(of: value, toByteOffset: slot + 8, as: UInt64.self)
        let counters = UnsafeRawBufferPointer(start: memory.base + slot, count: 16)
        let sum = checksum ? ArenaLayout.checksum(counters, seed: UInt64(slot)) : 0
        memory.base.storeBytes(of: sum, toByteOffset: slot + 16, as: UInt64.self)
      }
    }
    let slots = ArenaLayout.HeaderField.counterSlots
    for value in [UInt64.max, 1 << 63, ArenaLayout.largestCounter + 1] {
      let crafted = try Self.copy(store.arena)
      setCounters(crafted, value, slots: slots, checksum: true)
      #expect(throws: ArenaError.self, "\(value)") { try Arena.open(crafted, isValidName: Store.isValidName) }
    }
    let torn = try Self.copy(store.arena)
    setCounters(torn, 0, slots: [slots[0]], checksum: false)
    let (arena, _) = try Arena.open(torn, isValidName: Store.isValidName)
    #expect(arena.nextItemNumber == store.arena.nextItemNumber)
    let bothTorn = try Self.copy(store.arena)
    setCounters(bothTorn, 0, slots: slots, checksum: false)
    #expect(throws: ArenaError.self) { try Arena.open(bothTorn, isValidName: Store.isValidName) }
  }

  @Test(
    "a record that checks out but names a collection no object path can carry, or a number out of range, is refused")
  func craftedRecordsAreRefused() throws {
    func withCollection(named name: String, id: UInt64) throws -> ArenaMemory {
      let store = try Self.filledStore()
      let record = CollectionRecord(modified: 0, locked: false, id: id, created: 0, name: name, label: "crafted")
      _ = try store.writeCollection(record, replacing: nil)
      return try Self.copy(store.arena)
    }
    // Positive control: a well-formed one is served.
    #expect(try Self.held(try withCollection(named: "crafted", id: 90)).count == 3)
    for name in ["bad/name", "with space", "", String(repeating: "a", count: 200)] {
      let crafted = try withCollection(named: name, id: 91)
      #expect(throws: ArenaError.self, "\(name)") { try Arena.open(crafted, isValidName: Store.isValidName) }
    }
    let outOfRange = try withCollection(named: "crafted", id: 1 << 63)
    #expect(throws: ArenaError.self) { try Arena.open(outOfRange, isValidName: Store.isValidName) }
  }

  /// Sets the word of the block at `offset` in `memory`.
  static func setWord(
    _ memory: ArenaMemory, at offset: Int, _ state: ArenaLayout.BlockState, _ kind: ArenaLayout.RecordKind
  ) {
    let size = ArenaLayout.BlockWord.size(of: memory.base.load(fromByteOffset: offset, as: UInt64.self))
    let word = ArenaLayout.BlockWord(state, kind, size: size).encoded(at: offset)
    memory.base.storeBytes(of: word.littleEndian, toByteOffset: offset, as: UInt64.self)
  }

  @Test(
    "a replacement caught at each of its commit points opens whole: before its commit the old copy, after it the new one, never both or neither"
  )
  func aReplacementCaughtAtEachCommitPointOpensWhole() throws {
    let store = try Self.filledStore()
    let (_, contents) = try Arena.open(try Self.copy(store.arena), isValidName: Store.isValidName)
    let old = try #require(contents.items.first { $0.found.record.attributes == ["n": "1"] })
    var record = old.found.record
    record.label = "replaced"
    let new = try store.writeItem(record, secret: sent(Array("new secret".utf8)), replacing: nil)
    // Committed, not yet released: both copies are committed, the newer wins.
    let bothCommitted = try Self.copy(store.arena)
    #expect(try Self.held(bothCommitted)[["n": "1"]] == Array("new secret".utf8))
    // Filled, not yet committed: the new copy is dirty; the old one is served and the new wiped.
    let beforeCommit = try Self.copy(store.arena)
    Self.setWord(beforeCommit, at: new.block, .dirty, .item)
    #expect(try Self.held(beforeCommit)[["n": "1"]] == Array("secret 1".utf8))
    #expect(try Self.held(beforeCommit).count == 3)
    // The release's commit point passed (the old copy marked dirty), its wipe not yet done.
    let released = try Self.copy(store.arena)
    Self.setWord(released, at: old.found.offset, .dirty, .none)
    #expect(try Self.held(released)[["n": "1"]] == Array("new secret".utf8))
    #expect(try Self.held(released).count == 3)
  }

  @Test("a commit word half written (its low half new, its high half old) is refused whole, never served in part")
  func aHalfWrittenCommitWordIsRefused() throws {
    let store = try Self.filledStore()
    let blocks = Self.blocks(of: try Self.copy(store.arena)).filter { $0.word.state == .committed }
    #expect(blocks.count >= 5)
    for (offset, word) in blocks {
      let memory = try Self.copy(store.arena)
      let dirty = ArenaLayout.BlockWord(.dirty, word.kind, size: word.size).encoded(at: offset)
      let committed = ArenaLayout.BlockWord(.committed, word.kind, size: word.size).encoded(at: offset)
      let torn = committed & 0xFFFF_FFFF | dirty & 0xFFFF_FFFF_0000_0000
      #expect(torn != committed && torn != dirty)
      memory.base.storeBytes(of: torn.littleEndian, toByteOffset: offset, as: UInt64.self)
      #expect(throws: ArenaError.self, "the word at \(offset)") {
        try Arena.open(memory, isValidName: Store.isValidName)
      }
    }
  }

  @Test(
    "a collection's in-place field (its modified time or its lock) with any byte changed is refused, not read as another value"
  )
  func aDamagedInPlaceFieldIsRefused() throws {
    let store = try Self.filledStore()
    let collections = Self.blocks(of: try Self.copy(store.arena)).filter {
      $0.word.state == .committed && $0.word.kind == .collection
    }
    #expect(collections.count == 2)
    for (offset, _) in collections {
      for field in [CollectionRecord.modifiedOffset, CollectionRecord.lockedOffset] {
        for byte in 0..<8 {
          let damaged = try Self.copy(store.arena)
          let place = offset + ArenaLayout.blockHeaderSize + field + byte
          damaged.base.storeBytes(
            of: damaged.base.load(fromByteOffset: place, as: UInt8.self) ^ 0x04, toByteOffset: place, as: UInt8.self)
          #expect(throws: ArenaError.self, "byte \(byte) of field \(field) at \(offset)") {
            try Arena.open(damaged, isValidName: Store.isValidName)
          }
        }
      }
    }
  }
}
