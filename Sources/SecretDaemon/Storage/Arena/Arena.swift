// The arena: records in memory that outlives the process, written so that a process killed at
// any instruction leaves every committed record whole and nothing torn. A record is written in a
// dirty block and committed by one aligned 8-byte store of its block's first word; a replaced or
// deleted record is marked dirty (its deletion's commit point), wiped, then marked free. A
// record and its replacement may both be committed for a moment: the higher sequence wins.
import Synchronization
import SystemCalls

/// Why an arena cannot be used.
enum ArenaError: Error, Equatable, CustomStringConvertible {
  /// Not an arena of this layout at all.
  case notAnArena(String)
  case unsupportedVersion(UInt32)
  /// A record that does not decode.
  case malformed(String)
  /// Something wrong at a place in the arena.
  case damaged(offset: Int, String)

  var description: String {
    switch self {
    case .notAnArena(let reason): "not a secretd arena (\(reason))"
    case .unsupportedVersion(let version):
      "layout version \(version), which this secretd (layout \(ArenaLayout.version)) does not read"
    case .malformed(let reason): reason
    case .damaged(let offset, let reason): "at byte \(offset): \(reason)"
    }
  }
}

/// A committed record found when an arena is opened.
struct FoundRecord<Record> {
  let offset: Int
  let sequence: UInt64
  let record: Record
}

/// What an opened arena holds, every duplicate and orphan already resolved.
struct ArenaContents {
  var collections: [FoundRecord<CollectionRecord>] = []
  var items: [(found: FoundRecord<ItemRecord>, secretOffset: Int)] = []
  var aliases: FoundRecord<AliasesRecord>?
}

/// Records in an arena's memory. Not thread-safe: the store's lock is held around every use.
final class Arena {
  let memory: ArenaMemory
  private var space = FreeSpace()
  /// Bytes of committed blocks.
  private(set) var usedBytes = 0
  private var nextSequence: UInt64 = 1

  var size: Int { memory.size }
  /// Bytes records may take: everything after the header.
  var capacity: Int { memory.size - ArenaLayout.headerSize }

  /// Formats `memory` as an empty arena: a header, then one free block.
  init(formatting memory: ArenaMemory, now: UInt64) {
    self.memory = memory
    let header = UnsafeMutableRawBufferPointer(start: memory.base, count: ArenaLayout.headerSize)
    header.storeBytes(of: ArenaLayout.magic.littleEndian, toByteOffset: ArenaLayout.HeaderField.magic, as: UInt64.self)
    header.storeBytes(
      of: ArenaLayout.version.littleEndian, toByteOffset: ArenaLayout.HeaderField.version, as: UInt32.self)
    header.storeBytes(
      of: UInt32(ArenaLayout.headerSize).littleEndian, toByteOffset: ArenaLayout.HeaderField.headerSize, as: UInt32.self
    )
    header.storeBytes(
      of: UInt64(memory.size).littleEndian, toByteOffset: ArenaLayout.HeaderField.arenaSize, as: UInt64.self)
    header.storeBytes(of: now.littleEndian, toByteOffset: ArenaLayout.HeaderField.created, as: UInt64.self)
    header.storeBytes(
      of: Self.headerChecksum(header).littleEndian, toByteOffset: ArenaLayout.HeaderField.checksum, as: UInt64.self)
    writeCounters()
    setWord(at: ArenaLayout.headerSize, .free, .none, size: capacity)
    space.insert(ArenaLayout.headerSize, size: capacity)
  }

  /// Opens an arena left by an earlier process: checks its header and every record before
  /// anything is changed, then wipes what was being written, frees replaced copies and orphans.
  /// Throws, changing nothing, when anything does not check out.
  /// An arena of layout 1 is converted once it checks out: its words first (each a whole
  /// store, read either way until the header says layout 2), then the counters, then the header.
  /// Collection and alias names must pass `isValidName`.
  static func open(_ memory: ArenaMemory, isValidName: (String) -> Bool) throws(ArenaError) -> (Arena, ArenaContents) {
    let arena = Arena(unchecked: memory)
    let legacy = try arena.checkHeader()
    let counters = try arena.readCounters(legacy: legacy)
    var scan = try ArenaScan(arena, legacy: legacy)
    let contents = try scan.resolve(isValidName: isValidName)
    if legacy {
      for (offset, word) in scan.blocks { arena.setWord(at: offset, word.state, word.kind, size: word.size) }
      for found in contents.collections {
        arena.storeInPlace(found.record.modified, at: found.offset, field: CollectionRecord.modifiedOffset)
        arena.storeInPlace(found.record.locked ? 1 : 0, at: found.offset, field: CollectionRecord.lockedOffset)
      }
    }
    arena.nextSequence = scan.highestSequence + 1
    arena.nextItemNumber = max(counters.item, (contents.items.map { $0.found.record.number }.max() ?? 0) + 1)
    arena.nextCollectionID = max(counters.collection, (contents.collections.map { $0.record.id }.max() ?? 0) + 1)
    if legacy { arena.writeVersion() }
    arena.usedBytes = scan.committedBytes - scan.discarded.reduce(0) { $0 + arena.blockSize(at: $1) }
    for offset in scan.discarded { arena.discard(at: offset) }
    for offset in scan.dirty { arena.wipeAndFree(at: offset, size: arena.blockSize(at: offset)) }
    arena.indexFreeSpace()
    return (arena, contents)
  }

  private init(unchecked memory: ArenaMemory) { self.memory = memory }

  // MARK: Header counters

  /// The next item number; numbers are never reused.
  var nextItemNumber: UInt64 = 1 { didSet { writeCounters() } }

  /// The next collection id; ids are never reused.
  var nextCollectionID: UInt64 = 1 { didSet { writeCounters() } }

  /// Writes both copies of the counters, one after the other.
  private func writeCounters() {
    for slot in ArenaLayout.HeaderField.counterSlots {
      store(nextItemNumber, at: slot)
      store(nextCollectionID, at: slot + 8)
      store(counterChecksum(at: slot), at: slot + 16)
    }
  }

  /// The counters the header holds: of the copies whose checksum matches, the larger values
  /// (a crash tears at most one copy); layout 1's unchecked ones, when `legacy`.
  private func readCounters(legacy: Bool) throws(ArenaError) -> (item: UInt64, collection: UInt64) {
    let counters: (item: UInt64, collection: UInt64)
    if legacy {
      counters = (
        load(at: ArenaLayout.HeaderField.legacyNextItemNumber), load(at: ArenaLayout.HeaderField.legacyNextCollectionID)
      )
    } else {
      let whole = ArenaLayout.HeaderField.counterSlots.filter { load(at: $0 + 16) == counterChecksum(at: $0) }
      guard !whole.isEmpty else { throw .damaged(offset: 40, "neither copy of the header's counters checks out") }
      counters = (whole.map { load(at: $0) }.max() ?? 0, whole.map { load(at: $0 + 8) }.max() ?? 0)
    }
    guard counters.item <= ArenaLayout.largestCounter, counters.collection <= ArenaLayout.largestCounter else {
      throw .damaged(offset: 40, "counters out of range (\(counters.item), \(counters.collection))")
    }
    return counters
  }

  private func counterChecksum(at slot: Int) -> UInt64 {
    ArenaLayout.checksum(UnsafeRawBufferPointer(start: memory.base + slot, count: 16), seed: UInt64(slot))
  }

  // MARK: Records

  /// The block size a payload of `count` bytes takes.
  static func cost(payload count: Int) -> Int { ArenaLayout.blockSize(payload: count) }

  /// Writes a record of `kind` with at most `payloadCount` bytes, which `fill` writes and may
  /// shorten (it returns the count it wrote), then commits it. Returns its block's offset.
  /// nil when no free block is large enough; a `fill` that throws leaves nothing behind.
  func write<E: Error>(
    _ kind: ArenaLayout.RecordKind, payloadCount: Int,
    fill: (UnsafeMutableRawBufferPointer) throws(E) -> Int
  ) throws(E) -> Int? {
    guard let (offset, size) = allocate(ArenaLayout.blockSize(payload: payloadCount), kind: kind) else { return nil }
    let written: Int
    do throws(E) {
      written = try fill(payload(at: offset, count: payloadCount))
    } catch {
      wipeAndFree(at: offset, size: size)
      throw error
    }
    let sequence = nextSequence
    nextSequence += 1
    store(sequence, at: offset + ArenaLayout.BlockField.sequence)
    storeUInt32(UInt32(written), at: offset + ArenaLayout.BlockField.payloadLength)
    store(
      checksum(at: offset, kind: kind, sequence: sequence, count: written), at: offset + ArenaLayout.BlockField.checksum
    )
    setWord(at: offset, .committed, kind, size: size)
    usedBytes += size
    return offset
  }

  /// Deletes the record at `offset`: marked dirty (the deletion's commit point), wiped, freed.
  func release(_ offset: Int) {
    let size = blockSize(at: offset)
    usedBytes -= size
    setWord(at: offset, .dirty, .none, size: size)
    wipeAndFree(at: offset, size: size)
  }

  /// The payload of the committed record at `offset`.
  func payload(at offset: Int) -> UnsafeMutableRawBufferPointer {
    payload(at: offset, count: Int(loadUInt32(at: offset + ArenaLayout.BlockField.payloadLength)))
  }

  /// Writes `value` at `field` of the payload at `offset`, in place (the fields left out of
  /// the checksum: a collection's modified time and lock).
  func storeInPlace(_ value: UInt64, at offset: Int, field: Int) {
    store(ArenaLayout.LiveField.encoded(value, field: field), at: offset + ArenaLayout.blockHeaderSize + field)
  }

  /// The largest block a record could be written in now.
  var largestFreeBlock: Int { space.largest }

  /// Bytes of the block at `offset`.
  func blockSize(at offset: Int) -> Int { ArenaLayout.BlockWord.size(of: load(at: offset)) }

  // MARK: Blocks

  private func payload(at offset: Int, count: Int) -> UnsafeMutableRawBufferPointer {
    UnsafeMutableRawBufferPointer(start: memory.base + offset + ArenaLayout.blockHeaderSize, count: count)
  }

  /// A dirty block of at least `size` bytes, split from the best-fitting free one (all of it
  /// when what is left could not be a block); nil when none is large enough.
  private func allocate(_ size: Int, kind: ArenaLayout.RecordKind) -> (offset: Int, size: Int)? {
    guard let (offset, free) = space.takeBestFit(size) else { return nil }
    let rest = free - size
    guard rest >= ArenaLayout.blockHeaderSize else {
      setWord(at: offset, .dirty, kind, size: free)
      return (offset, free)
    }
    // The rest's header first: until the block shrinks, the rest is inside it.
    setWord(at: offset + size, .free, .none, size: rest)
    space.insert(offset + size, size: rest)
    setWord(at: offset, .dirty, kind, size: size)
    return (offset, size)
  }

  /// Wipes a dirty block, marks it free and joins it with free neighbours.
  private func wipeAndFree(at offset: Int, size: Int) {
    Memory.wipe(UnsafeMutableRawBufferPointer(start: memory.base + offset + 8, count: size - 8))
    setWord(at: offset, .free, .none, size: size)
    let (start, joined) = space.insertJoining(offset, size: size)
    if joined != size || start != offset { setWord(at: start, .free, .none, size: joined) }
  }

  /// Frees a committed block found when opening: a replaced copy or an orphan.
  private func discard(at offset: Int) {
    let size = blockSize(at: offset)
    setWord(at: offset, .dirty, .none, size: size)
    Memory.wipe(UnsafeMutableRawBufferPointer(start: memory.base + offset + 8, count: size - 8))
    setWord(at: offset, .free, .none, size: size)
  }

  /// Rebuilds the free-space index from the blocks, joining neighbours.
  private func indexFreeSpace() {
    space = FreeSpace()
    var offset = ArenaLayout.headerSize
    while offset < size, let word = ArenaLayout.BlockWord(decoding: load(at: offset), at: offset, legacy: false),
      word.size > 0
    {
      if word.state == .free {
        let (start, joined) = space.insertJoining(offset, size: word.size)
        if joined != word.size || start != offset { setWord(at: start, .free, .none, size: joined) }
      }
      offset += word.size
    }
  }

  func checksum(at offset: Int, kind: ArenaLayout.RecordKind, sequence: UInt64, count: Int) -> UInt64 {
    let checked = UnsafeRawBufferPointer(payload(at: offset, count: count)).dropFirst(kind.liveBytes)
    return ArenaLayout.checksum(
      UnsafeRawBufferPointer(rebasing: checked), seed: sequence ^ UInt64(kind.rawValue) << 56)
  }

  // MARK: Words

  /// The commit point: every earlier store of this thread lands before this one.
  private func setWord(at offset: Int, _ state: ArenaLayout.BlockState, _ kind: ArenaLayout.RecordKind, size: Int) {
    atomicMemoryFence(ordering: .releasing)
    store(ArenaLayout.BlockWord(state, kind, size: size).encoded(at: offset), at: offset)
  }

  func load(at offset: Int) -> UInt64 {
    UInt64(littleEndian: memory.base.load(fromByteOffset: offset, as: UInt64.self))
  }

  func loadUInt32(at offset: Int) -> UInt32 {
    UInt32(littleEndian: memory.base.load(fromByteOffset: offset, as: UInt32.self))
  }

  private func store(_ value: UInt64, at offset: Int) {
    memory.base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
  }

  private func storeUInt32(_ value: UInt32, at offset: Int) {
    memory.base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
  }

  // MARK: Header

  static func headerChecksum(_ header: UnsafeMutableRawBufferPointer) -> UInt64 {
    ArenaLayout.checksum(UnsafeRawBufferPointer(rebasing: header[0..<ArenaLayout.HeaderField.checked]), seed: 0)
  }

  /// The checksum the header would have with `version` in place of its own.
  private static func headerChecksum(_ header: UnsafeMutableRawBufferPointer, version: UInt32) -> UInt64 {
    var copy = Array(header[0..<ArenaLayout.HeaderField.checked])
    copy.withUnsafeMutableBytes {
      $0.storeBytes(of: version.littleEndian, toByteOffset: ArenaLayout.HeaderField.version, as: UInt32.self)
    }
    return copy.withUnsafeBytes { ArenaLayout.checksum($0, seed: 0) }
  }

  /// Marks a converted arena as of this layout: the version, then the checksum (a crash between
  /// the two leaves a header whose checksum is layout 1's, which `checkHeader` reads as such).
  private func writeVersion() {
    let header = UnsafeMutableRawBufferPointer(start: memory.base, count: ArenaLayout.headerSize)
    atomicMemoryFence(ordering: .releasing)
    storeUInt32(ArenaLayout.version, at: ArenaLayout.HeaderField.version)
    store(Self.headerChecksum(header), at: ArenaLayout.HeaderField.checksum)
  }

  /// Checks the header; returns whether the arena is of layout 1 (or was being converted from it).
  private func checkHeader() throws(ArenaError) -> Bool {
    guard size >= ArenaLayout.headerSize + ArenaLayout.blockHeaderSize else {
      throw .notAnArena("\(size) bytes, smaller than any arena")
    }
    let header = UnsafeMutableRawBufferPointer(start: memory.base, count: ArenaLayout.headerSize)
    guard load(at: ArenaLayout.HeaderField.magic) == ArenaLayout.magic else { throw .notAnArena("no arena header") }
    let version = loadUInt32(at: ArenaLayout.HeaderField.version)
    guard version == ArenaLayout.version || version == ArenaLayout.legacyVersion else {
      throw .unsupportedVersion(version)
    }
    let stored = load(at: ArenaLayout.HeaderField.checksum)
    let legacy: Bool
    if stored == Self.headerChecksum(header) {
      legacy = version == ArenaLayout.legacyVersion
    } else if version == ArenaLayout.version, stored == Self.headerChecksum(header, version: ArenaLayout.legacyVersion)
    {
      legacy = true
    } else {
      throw .damaged(offset: 0, "the header's checksum does not match")
    }
    guard loadUInt32(at: ArenaLayout.HeaderField.headerSize) == ArenaLayout.headerSize,
      load(at: ArenaLayout.HeaderField.arenaSize) == UInt64(size)
    else { throw .damaged(offset: 0, "the header's sizes do not match the memory (\(size) bytes)") }
    return legacy
  }
}
