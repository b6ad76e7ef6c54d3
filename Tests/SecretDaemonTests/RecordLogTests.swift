// The record log on real files: every complete record recovered, a torn tail dropped, damage
// before it refused whole, compaction down to the live records.
import SecretMemory
import SystemCalls
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("record log")
struct RecordLogTests {
  static let keyID = [UInt8](repeating: 0xA5, count: 16)

  static func slot(_ item: UInt64) -> RecordSlot { RecordSlot(collection: "login", item: item) }

  /// A log of puts, a replacement and a delete; returns the live texts after every append, the
  /// file size after every append, and the key.
  static func filledLog(at path: String) throws -> (states: [[UInt64: String]], sizes: [Int], key: DataKey) {
    let key = try DataKey.random()
    let log = try RecordLog.create(at: path, keyID: keyID)
    var state: [UInt64: String] = [:]
    var states: [[UInt64: String]] = [state]
    var sizes = [log.size]
    let steps: [(UInt64, String?)] = [(1, "one"), (2, "two"), (3, "three"), (2, "two again"), (1, nil), (4, "four")]
    for (item, text) in steps {
      if let text {
        try log.put(plaintext(text), in: slot(item), key: key)
        state[item] = text
      } else {
        try log.delete(slot(item), key: key)
        state[item] = nil
      }
      states.append(state)
      sizes.append(log.size)
    }
    return (states, sizes, key)
  }

  static func isDamage(_ error: any Error) -> Bool {
    if case .damaged = error as? RecordLogError { return true }
    return false
  }

  @Test("every appended record is read back after reopening: puts, replacements and deletes")
  func reopen() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, sizes, key) = try Self.filledLog(at: path)
      #expect(try fileBytes(path).count == sizes.last)
      let log = try RecordLog.open(at: path)
      #expect(try unsealedTexts(log, key: key) == states.last)
      #expect(log.tombstones.keys.map(\.item) == [1])
      #expect(log.droppedTailBytes == 0)
      #expect(log.nextGeneration == 7)
    }
  }

  @Test("the log cut at every byte of its last record opens with exactly the records before it")
  func tornTailAtEveryOffset() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, sizes, key) = try Self.filledLog(at: path)
      let whole = try fileBytes(path)
      let lastStart = sizes[sizes.count - 2]
      let copy = folder + "/cut.log"
      for cut in lastStart..<whole.count {
        try writeFile(copy, Array(whole[..<cut]))
        let log = try RecordLog.open(at: copy)
        #expect(try unsealedTexts(log, key: key) == states[states.count - 2], "cut at \(cut)")
        #expect(log.droppedTailBytes == cut - lastStart, "cut at \(cut)")
        #expect(try fileBytes(copy).count == lastStart, "cut at \(cut)")
      }
      // And the whole file has the last record (the positive control).
      #expect(try unsealedTexts(try RecordLog.open(at: path), key: key) == states.last)
    }
  }

  @Test("a log whose last append reached only its length as zeros opens with the records before it")
  func zeroFilledTail() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, sizes, key) = try Self.filledLog(at: path)
      let whole = try fileBytes(path)
      let lastStart = sizes[sizes.count - 2]
      try writeFile(path, Array(whole[..<lastStart]) + [UInt8](repeating: 0, count: whole.count - lastStart))
      do {
        let log = try RecordLog.open(at: path)
        #expect(try unsealedTexts(log, key: key) == states[states.count - 2])
        // The cut tail is gone: the next append lands where it began and reads back.
        try log.put(plaintext("five"), in: Self.slot(5), key: key)
      }
      var expected = states[states.count - 2]
      expected[5] = "five"
      #expect(try unsealedTexts(try RecordLog.open(at: path), key: key) == expected)
    }
  }

  @Test("a log whose last append left garbage where its pages never reached the disk opens with the records before it")
  func garbageTail() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, sizes, key) = try Self.filledLog(at: path)
      let whole = try fileBytes(path)
      let lastStart = sizes[sizes.count - 2]
      for trial in 0..<20 {
        let garbage = (lastStart..<whole.count).map { _ in UInt8.random(in: 0...255) }
        try writeFile(path, Array(whole[..<lastStart]) + garbage)
        #expect(try unsealedTexts(try RecordLog.open(at: path), key: key) == states[states.count - 2], "trial \(trial)")
      }
    }
  }

  @Test("after a torn tail is cut off, new appends are read back with the old records")
  func appendAfterTornTail() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, _, key) = try Self.filledLog(at: path)
      let whole = try fileBytes(path)
      try writeFile(path, Array(whole.dropLast(5)))
      try RecordLog.open(at: path).put(plaintext("five"), in: Self.slot(5), key: key)
      var expected = states[states.count - 2]
      expected[5] = "five"
      #expect(try unsealedTexts(try RecordLog.open(at: path), key: key) == expected)
    }
  }

  @Test("a flipped byte anywhere before the last record refuses the whole log and leaves it untouched")
  func damageBeforeTheTail() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (_, sizes, _) = try Self.filledLog(at: path)
      let whole = try fileBytes(path)
      let copy = folder + "/damaged.log"
      for offset in 0..<sizes[sizes.count - 2] {
        var damaged = whole
        damaged[offset] ^= 0x10
        try writeFile(copy, damaged)
        #expect("offset \(offset)") { try RecordLog.open(at: copy) } throws: { Self.isDamage($0) }
        #expect(try fileBytes(copy) == damaged, "offset \(offset)")
      }
      _ = try RecordLog.open(at: path)
    }
  }

  @Test("a last record whose body fails its check is dropped as an unsynced append")
  func damagedLastBody() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, _, key) = try Self.filledLog(at: path)
      var whole = try fileBytes(path)
      whole[whole.count - 1] ^= 0x01
      try writeFile(path, whole)
      let log = try RecordLog.open(at: path)
      #expect(try unsealedTexts(log, key: key) == states[states.count - 2])
    }
  }

  @Test("an old record appended again (a replay) refuses the log, before and after compaction")
  func replayRefused() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (_, sizes, _) = try Self.filledLog(at: path)
      let whole = try fileBytes(path)
      let firstFrame = Array(whole[sizes[0]..<sizes[1]])
      try writeFile(path, whole + firstFrame)
      #expect { try RecordLog.open(at: path) } throws: { Self.isDamage($0) }

      try writeFile(path, whole)
      try RecordLog.open(at: path).compact()
      // Item 1's put: deleted, so compaction dropped it; its generation is below the floor.
      try writeFile(path, try fileBytes(path) + firstFrame)
      #expect { try RecordLog.open(at: path) } throws: { Self.isDamage($0) }
    }
  }

  @Test("compaction keeps exactly the live records, sealed as they were, and shrinks the file")
  func compaction() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (states, _, key) = try Self.filledLog(at: path)
      var expected = try #require(states.last)
      expected[2] = "two, round 5"
      let (live, generation) = try { () throws -> ([RecordSlot: LogRecord], UInt64) in
        let log = try RecordLog.open(at: path)
        for round in 1...5 { try log.put(plaintext("two, round \(round)"), in: Self.slot(2), key: key) }
        let before = log.size
        #expect(log.reclaimableBytes > 0)
        let live = log.live
        try log.compact()
        let liveFrames = live.values.compactMap { RecordLogFormat.frame($0)?.count }.reduce(0, +)
        #expect(log.size == RecordLogFormat.headSize + liveFrames)
        #expect(log.size < before)
        #expect(try fileBytes(path).count == log.size)
        #expect(log.reclaimableBytes == 0)
        return (live, log.nextGeneration)
      }()
      do {
        let reopened = try RecordLog.open(at: path)
        #expect(reopened.live == live)
        #expect(reopened.tombstones.isEmpty)
        #expect(reopened.nextGeneration == generation)
        #expect(try unsealedTexts(reopened, key: key) == expected)
        try reopened.put(plaintext("six"), in: Self.slot(6), key: key)
      }
      expected[6] = "six"
      #expect(try unsealedTexts(try RecordLog.open(at: path), key: key) == expected)
      #expect(!Files.exists(folder + "/.login.log.new"))
    }
  }

  @Test("a second holder of an open log is refused until the first lets go")
  func exclusiveHold() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      var first: RecordLog? = try RecordLog.create(at: path, keyID: Self.keyID)
      #expect(throws: RecordLogError.inUse(path: path)) { try RecordLog.open(at: path) }
      #expect(first != nil)
      first = nil
      _ = try RecordLog.open(at: path)
      #expect(throws: RecordLogError.exists(path: path)) { try RecordLog.create(at: path, keyID: Self.keyID) }
    }
  }

  @Test("a live record sealed with another key refuses the whole unsealing")
  func foreignRecordRefused() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (_, _, key) = try Self.filledLog(at: path)
      let log = try RecordLog.open(at: path)
      try log.put(plaintext("intruder"), in: Self.slot(9), key: try DataKey.random())
      #expect { try log.unseal(with: key) } throws: { error in
        if case .sealing(_, _, .refused) = error as? RecordLogError { return true }
        return false
      }
    }
  }

  @Test("a delete sealed with another key (a forged delete) refuses the whole unsealing")
  func forgedDeleteRefused() throws {
    try withPersistenceFolder { folder in
      let path = folder + "/login.log"
      let (_, _, key) = try Self.filledLog(at: path)
      let log = try RecordLog.open(at: path)
      try log.delete(Self.slot(4), key: try DataKey.random())
      #expect { try log.unseal(with: key) } throws: { error in
        if case .sealing(_, _, .refused) = error as? RecordLogError { return true }
        return false
      }
    }
  }

  @Test("a record of a stale generation, or the delete of an absent item, is not appended")
  func invalidAppends() throws {
    try withPersistenceFolder { folder in
      let log = try RecordLog.create(at: folder + "/login.log", keyID: Self.keyID)
      let key = try DataKey.random()
      let stale = RecordIdentity(collection: "login", item: 1, generation: 0)
      let record = LogRecord(kind: .put, identity: stale, sealed: try key.seal(plaintext("x"), as: stale))
      #expect { try log.append(record) } throws: { error in
        if case .invalidRecord = error as? RecordLogError { return true }
        return false
      }
      #expect { try log.delete(Self.slot(1), key: key) } throws: { error in
        if case .invalidRecord = error as? RecordLogError { return true }
        return false
      }
      #expect(log.size == RecordLogFormat.headSize)
    }
  }
}
