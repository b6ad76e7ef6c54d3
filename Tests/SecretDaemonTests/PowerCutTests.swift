// Power cuts of the persistent collection, simulated on its files. Only what was synced survives
// a cut: the log up to the end of the last acknowledged write, then any part of the append in
// flight, with zeros or garbage where its pages never reached the disk; a replacement's temporary
// file (a compaction's, the key file's) torn beside the files it did not replace. Every
// acknowledged write comes back byte for byte and nothing torn; a change inside the acknowledged
// part refuses the log whole: set aside, reported, and `login` starts anew, never served in part.
import Foundation
import SecretMemory
import SystemCalls
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("power cuts of the persistent collection")
struct PowerCutTests {
  static let passphrase = "power cut"

  /// Writes acknowledged in `login`: its items after each (the first: none), where the log
  /// ended then, and the files at the end.
  struct WriteHistory {
    var states: [[[String: String]: [UInt8]]] = []
    var ends: [Int] = []
    var log: [UInt8] = []
    var keyFile: [UInt8] = []
  }

  /// What a power cut leaves of the append in flight, besides cutting it short.
  enum Tail: CaseIterable {
    case asWritten, zeros, garbage, flippedBytes
  }

  /// `writes` creates, replaces and deletes of random binary secrets in `login`, each one
  /// appended and synced before it returns, as secretd acknowledges them.
  static func history(writes: Int) throws -> WriteHistory {
    try withPersistenceFolder { folder in
      let (store, sealed) = try SealedCollectionTests.unlockedStore(in: folder, passphrase: passphrase)
      let log = try #require(sealed.log)
      var history = WriteHistory(states: [[:]], ends: [log.size])
      var state: [[String: String]: [UInt8]] = [:]
      for step in 1...writes {
        let secret = (0..<Int.random(in: 1...600)).map { _ in UInt8.random(in: 0...255) }
        if step % 5 == 0, let attributes = state.keys.randomElement() {
          let number = try #require(store.collections["login"]?.items.first { $0.value.attributes == attributes }?.key)
          try store.deleteItem(ItemReference(collection: "login", item: number))
          state[attributes] = nil
        } else {
          let replaced = step % 3 == 0 ? state.keys.randomElement() : nil
          let attributes = replaced ?? ["n": "\(step)"]
          _ = try store.createItem(
            in: "login", label: "l", attributes: attributes, contentType: "application/octet-stream",
            secret: sent(secret), replace: true)
          state[attributes] = secret
        }
        history.states.append(state)
        history.ends.append(log.size)
      }
      // Compaction runs only at unlock: the file holds every append.
      #expect(try fileBytes(sealed.logPath).count == log.size)
      (history.log, history.keyFile) = (try fileBytes(sealed.logPath), try fileBytes(sealed.keyPath))
      return history
    }
  }

  /// The log as a power cut while write `inFlight` was appended may leave it (all of that
  /// append's length when `reachesEnd`), and the state that must come back: that write's when
  /// its frame is all there, else the one before.
  static func cut(_ history: WriteHistory, inFlight: Int, tail: Tail, reachesEnd: Bool) -> (
    log: [UInt8], expected: Int
  ) {
    let (start, end) = (history.ends[inFlight - 1], history.ends[inFlight])
    let length = reachesEnd ? end : Int.random(in: start...end)
    var log = Array(history.log[..<length])
    let lost = Int.random(in: start...length)..<length
    switch tail {
    case .asWritten: break
    case .zeros: for index in lost { log[index] = 0 }
    case .garbage: for index in lost { log[index] = .random(in: 0...255) }
    case .flippedBytes:
      for _ in 0..<(length > start ? Int.random(in: 1...3) : 0) { log[Int.random(in: start..<length)] ^= 0x20 }
    }
    let whole = length == end && log[start...] == history.log[start..<end]
    return (log, whole ? inFlight : inFlight - 1)
  }

  /// A data folder holding `log` and the key file, and the temporary files of a compaction
  /// and of a key file's replacement, each cut short before its rename.
  static func writeFolder(_ folder: String, log: [UInt8], history: WriteHistory) throws {
    try Files.makePrivateDirectory(folder)
    try writeFile(folder + "/login.log", log)
    try writeFile(folder + "/login.key", history.keyFile)
    try writeFile(folder + "/.login.log.new", Array(history.log.prefix(Int.random(in: 0...history.log.count))))
    try writeFile(
      folder + "/.login.key.tmp-1-1", Array(history.keyFile.prefix(Int.random(in: 0...history.keyFile.count))))
  }

  @Test(
    "the log cut at 200 random points at or after the last acknowledged write, its torn tail zeroed, garbled or left as written, beside torn temporary files: every acknowledged write comes back byte for byte, deletions stay deleted, nothing torn, and the next write lands after them"
  )
  func everyAcknowledgedWriteSurvivesAPowerCut() throws {
    let history = try Self.history(writes: 60)
    var wholeInFlight = 0
    for trial in 0..<200 {
      let tail = Tail.allCases[trial % Tail.allCases.count]
      let inFlight = Int.random(in: 1..<history.states.count)
      let (log, expected) = Self.cut(history, inFlight: inFlight, tail: tail, reachesEnd: trial % 5 == 0)
      if expected == inFlight { wholeInFlight += 1 }
      try withPersistenceFolder { scratch in
        let folder = scratch + "/secretd"
        try Self.writeFolder(folder, log: log, history: history)
        do {
          let (store, sealed) = try reopenedLogin(in: folder, passphrase: Self.passphrase)
          #expect(try loginItems(store) == history.states[expected], "trial \(trial): \(tail), \(log.count) bytes")
          #expect(sealed.rejectedLogs.isEmpty, "trial \(trial)")
          _ = try store.createItem(
            in: "login", label: "after", attributes: ["after": "cut"], contentType: "text/plain", secret: sent("next"),
            replace: false)
        }
        var afterwards = history.states[expected]
        afterwards[["after": "cut"]] = Array("next".utf8)
        // Reopened from a copy: a child another test spawns meanwhile may still hold the log's
        // lock through the descriptor just closed, until it runs its program.
        let again = scratch + "/again"
        try Files.makePrivateDirectory(again)
        for name in ["login.key", "login.log"] { try writeFile(again + "/" + name, try fileBytes(folder + "/" + name)) }
        let (store, _) = try reopenedLogin(in: again, passphrase: Self.passphrase)
        #expect(try loginItems(store) == afterwards, "trial \(trial): the write after the cut")
      }
    }
    // Where the write in flight reached the disk whole, it is served (no tail dropped for nothing).
    #expect(wholeInFlight >= 10)
  }

  @Test(
    "a byte changed inside the acknowledged part of the log (before its last record) refuses it when secretd starts, without failing the start: set aside byte for byte, reported, and login starts anew, empty, at unlock"
  )
  func aChangeInTheAcknowledgedPartIsSetAside() throws {
    let history = try Self.history(writes: 20)
    for trial in 0..<50 {
      let acknowledged = Int.random(in: 1..<history.states.count)
      var log = Array(history.log[..<history.ends[acknowledged]])
      let offset = Int.random(in: 0..<history.ends[acknowledged - 1])
      log[offset] ^= UInt8.random(in: 1...255)
      try withPersistenceFolder { scratch in
        let folder = scratch + "/secretd"
        try Self.writeFolder(folder, log: log, history: history)
        let store = try makeStore(limits: Limits(maxMemory: 4 << 20))
        let sealed = try SealedCollection.attach(folder: folder, to: store, parameters: .fastForTests())
        try Self.expectSetAside(log, in: folder, reported: sealed.rejectedLogs, "trial \(trial), byte \(offset)")
        _ = try sealed.unlock(passphrase: plaintext(Self.passphrase), store: store, storeLock: ReadWriteLock())
        #expect(try loginItems(store).isEmpty, "trial \(trial)")
      }
    }
  }

  @Test(
    "a live record whose checksums pass but whose seal does not open with the right key refuses the whole log at unlock: none of it is served, it is set aside and reported, and login serves a new, empty log"
  )
  func aRecordThatDoesNotOpenRefusesTheWholeLog() throws {
    let history = try Self.history(writes: 20)
    let scan = try RecordLogFormat.scan(history.log, path: "login.log")
    var latest: [RecordSlot: Int] = [:]
    for (index, record) in scan.records.enumerated() { latest[record.identity.slot] = index }
    let live = latest.values.filter { scan.records[$0].kind == .put }
    try #require(live.count > 1)
    var records = scan.records
    let changed = try #require(live.randomElement())
    var sealed = records[changed].sealed
    sealed[Int.random(in: 0..<sealed.count)] ^= 0x01
    records[changed] = LogRecord(kind: .put, identity: records[changed].identity, sealed: sealed)
    let log = RecordLogFormat.encode(scan.head) + records.flatMap { RecordLogFormat.frame($0) ?? [] }
    try withPersistenceFolder { scratch in
      let folder = scratch + "/secretd"
      try Self.writeFolder(folder, log: log, history: history)
      let store = try makeStore(limits: Limits(maxMemory: 4 << 20))
      let sealed = try SealedCollection.attach(folder: folder, to: store, parameters: .fastForTests())
      #expect(sealed.rejectedLogs.isEmpty, "its checksums pass: only unsealing finds it")
      _ = try sealed.unlock(passphrase: plaintext(Self.passphrase), store: store, storeLock: ReadWriteLock())
      try Self.expectSetAside(log, in: folder, reported: sealed.rejectedLogs, "record \(changed)")
      #expect(try loginItems(store).isEmpty)
      #expect(store.collections["login"]?.locked == false)
      _ = try store.createItem(
        in: "login", label: "new", attributes: ["new": "log"], contentType: "text/plain", secret: sent("fresh"),
        replace: false)
    }
  }

  /// `log` is no longer the log but kept beside it, byte for byte, under a name that says it
  /// was rejected, and one report names it.
  static func expectSetAside(_ log: [UInt8], in folder: String, reported: [String], _ context: String) throws {
    let kept = try files(in: folder, startingWith: "login.log.rejected-")
    #expect(kept.count == 1, "\(context): \(kept)")
    if let name = kept.first {
      #expect(try fileBytes(folder + "/" + name) == log, "\(context)")
      #expect(reported.count == 1 && reported[0].contains(name), "\(context): \(reported)")
    }
    let current = Files.exists(folder + "/login.log") ? try fileBytes(folder + "/login.log") : nil
    #expect(current != log, "\(context): the log is a new one, or none yet")
  }
}
