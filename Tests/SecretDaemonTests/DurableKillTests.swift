// secretd --persistent killed with SIGKILL while writers create, replace and delete items in
// `login`: the sealed files alone give back every write acknowledged before the kill. After each
// kill the files are checked as a restarted secretd reads them (a copy opened and unlocked here,
// through the same code), then secretd restarts on them and is unlocked, and the writers go on.
import Foundation
import GLibBridge
import SecretTestSupport
import SystemCalls
import Testing

@testable import SecretDaemon

@Suite("SIGKILL during durable writes")
struct DurableKillTests {
  static let kills = 200
  static let passphrase = "killed at random"

  static func unlock(_ secretd: KeptSecretd) throws {
    let client = try RawClient(address: secretd.instance.busAddress, destination: secretd.busName)
    try client.call(
      ObjectPaths.root, Interfaces.secretd, "UnlockWithPassphrase", .tuple([.bytes(Array(passphrase.utf8))]))
  }

  /// `login`'s items as a secretd restarted on `folder`'s files serves them, from a copy of
  /// them (the restarted secretd then recovers the files themselves).
  static func served(fromCopyOf folder: String) throws -> [[String: String]: [UInt8]] {
    try withPersistenceFolder { copy in
      for name in ["login.key", "login.log"] { try writeFile(copy + "/" + name, try fileBytes(folder + "/" + name)) }
      let (store, sealed) = try reopenedLogin(in: copy, passphrase: passphrase)
      #expect(sealed.rejectedLogs.isEmpty, "\(sealed.rejectedLogs)")
      return try loginItems(store)
    }
  }

  /// What the files may give back for each item: as served before this round (`carried`) when
  /// no write of the round touched it; else the state last acknowledged before the kill
  /// (`before`), or any sent after it, whose answer may not have come.
  static func possibleStates(
    _ histories: [[String: String]: WriteLog.History], before: [[String: String]: WriteLog.History],
    carried: [[String: String]: [UInt8]]
  ) -> [[String: String]: [[UInt8]?]] {
    var possible = carried.mapValues { [$0] as [[UInt8]?] }
    for (attributes, history) in histories {
      if let acknowledged = before[attributes]?.acknowledged {
        possible[attributes] = Array(history.sent[acknowledged...])
      } else {
        possible[attributes] = [carried[attributes]] + history.sent
      }
    }
    return possible
  }

  @Test(
    "killed with SIGKILL at 200 random instants while 4 writers create, replace and delete in login: after each kill the files alone give back every write acknowledged before it byte for byte, deletions stay deleted, nothing torn, and secretd restarted on them serves them after unlock"
  )
  func everyAcknowledgedWriteSurvivesAKill() async throws {
    try await withProvider(.secretd) { instance in
      let folder = instance.bus.directory.appending(path: "durable/secretd").path
      try seedCheapKeyFile(in: folder, passphrase: Self.passphrase)
      // The service manager's arena is handed back too, as under systemd; login's items in it
      // are dropped at each start and come from the files alone.
      let arena = try SurvivalTests.keptArena()
      let secretd = KeptSecretd(
        on: instance, busName: "org.example.durable", arena: arena.arena.memory.file.rawValue,
        arguments: ["--max-memory", "2M", "--persistent", "--data-folder", folder])
      try secretd.start()
      defer { secretd.stop() }
      try Self.unlock(secretd)
      var carried: [[String: String]: [UInt8]] = [:]
      for kill in 0..<Self.kills {
        // Writers for one round, until the kill: none writes while the next secretd is still
        // locked (its login then shows no items, so a deletion would find nothing to delete).
        let log = WriteLog()
        let writers = (0..<4).map { writer in
          Task { try await onOwnThread { try log.write(as: writer, to: secretd) } }
        }
        log.allow(1_000_000)
        let enough = Int.random(in: 1...6)
        try await eventually("writes acknowledged before kill \(kill)", seconds: 30) { log.acknowledgedCount >= enough }
        // A random instant within the next few writes, not one just after an acknowledgement.
        try await Task.sleep(for: .microseconds(Int.random(in: 0..<5_000)))
        let before = log.histories
        secretd.kill()
        log.stop()
        for writer in writers { try await writer.value }
        let served = try Self.served(fromCopyOf: folder)
        let possible = Self.possibleStates(log.histories, before: before, carried: carried)
        for (attributes, states) in possible {
          let allowed = states.contains(served[attributes])
          #expect(
            allowed,
            "kill \(kill): \(attributes): \(served[attributes]?.count ?? -1) bytes, allowed \(states.map { $0?.count ?? -1 })"
          )
        }
        #expect(served.keys.allSatisfy { possible[$0] != nil }, "kill \(kill): an item nobody wrote")
        carried = served
        try secretd.start()
        try Self.unlock(secretd)
      }
      // The last secretd, restarted on the files and unlocked, serves exactly what they hold.
      let client = try RawClient(address: instance.busAddress, destination: secretd.busName)
      let session = try client.openPlainSession()
      #expect(carried.count > 4)
      #expect(try client.search(["kept": "yes"]).count == carried.count)
      for (attributes, secret) in carried {
        let found = try client.search(attributes)
        #expect(found.count == 1, "\(attributes)")
        let same = try found.first.map { try client.plainSecret($0, session: session) } == secret
        #expect(same, "\(attributes)")
      }
    }
  }
}
