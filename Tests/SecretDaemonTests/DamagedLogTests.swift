// secretd --persistent started on a damaged login.log: it serves all the same, never any part of
// the damaged log, which it keeps aside and reports as it reports a refused arena.
import Foundation
import GLibBridge
import SecretTestSupport
import SystemCalls
import Testing

@testable import SecretDaemon

@Suite("a damaged log under a real secretd")
struct DamagedLogTests {
  static let passphrase = "damaged"

  static func unlock(_ client: RawClient) throws {
    try client.call(
      ObjectPaths.root, Interfaces.secretd, "UnlockWithPassphrase", .tuple([.bytes(Array(passphrase.utf8))]))
  }

  static func rejectedStores(_ client: RawClient) throws -> [String] {
    let reply = try client.call(
      ObjectPaths.root, Interfaces.properties, "Get", .tuple([.string(Interfaces.secretd), .string("RejectedStores")]))
    return reply.child(0)?.unboxed?.elements.compactMap(\.string) ?? []
  }

  @Test(
    "secretd started on a damaged login.log keeps serving: the log is set aside byte for byte, a warning says what to do, RejectedStores lists it (across a restart, until discarded), none of its items is served, and login serves a new log that outlives a restart"
  )
  func aDamagedLogNeitherStopsSecretdNorIsServed() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      let folder = PersistentCollectionTests.dataFolder(instance)
      try seedCheapKeyFile(in: folder, passphrase: Self.passphrase)
      var client = try RawClient(address: instance.busAddress)
      try Self.unlock(client)
      var session = try client.openPlainSession()
      for name in ["first", "second"] {
        try client.createPlainItem(session: session, attributes: ["old": name], secret: Array(name.utf8))
      }
      instance.stopProvider()
      // A byte of the first record's body, with the second record after it: damage, not a torn tail.
      var damaged = try fileBytes(folder + "/login.log")
      damaged[RecordLogFormat.headSize + RecordLogFormat.frameHeaderSize + 4] ^= 0x01
      try writeFile(folder + "/login.log", damaged)

      try instance.startProvider()
      client = try RawClient(address: instance.busAddress)
      let kept = try files(in: folder, startingWith: "login.log.rejected-")
      #expect(kept.count == 1)
      let keptPath = folder + "/" + (kept.first ?? "")
      #expect(try fileBytes(keptPath) == damaged)
      let log = try String(contentsOf: instance.bus.directory.appending(path: "secretd.log"), encoding: .utf8)
      #expect(log.contains("warning: \(folder)/login.log is damaged at byte"), "\(log)")
      #expect(log.contains("it is kept as \(keptPath)") && log.contains("delete the kept file"), "\(log)")
      #expect(try Self.rejectedStores(client).count == 1)
      #expect(try Self.rejectedStores(client).first?.contains(keptPath) == true)
      let status = try instance.run(try builtExecutable("secretctl").path, ["status"])
      #expect(status.stdoutText.contains("refused store, kept: \(folder)/login.log is damaged"), "\(status.stdoutText)")

      try Self.unlock(client)
      session = try client.openPlainSession()
      #expect(try client.search(["old": "first"]).isEmpty && client.search(["old": "second"]).isEmpty)
      try client.createPlainItem(session: session, attributes: ["new": "log"], secret: Array("kept".utf8))

      instance.stopProvider()
      try instance.startProvider()
      client = try RawClient(address: instance.busAddress)
      #expect(try Self.rejectedStores(client).first?.contains(keptPath) == true, "reported while the file is there")
      try Self.unlock(client)
      session = try client.openPlainSession()
      let item = try #require(try client.search(["new": "log"]).first)
      #expect(try client.plainSecret(item, session: session) == Array("kept".utf8))
      try client.call(ObjectPaths.root, Interfaces.secretd, "DiscardRejectedStores", .tuple([]))
      #expect(try Self.rejectedStores(client).isEmpty)
      #expect(try fileBytes(keptPath) == damaged, "discarding the report leaves the file")
    }
  }
}
