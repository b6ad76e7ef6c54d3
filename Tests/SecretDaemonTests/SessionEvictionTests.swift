// A client may open sessions without end: past --max-sessions its least recently used session
// is closed, so python secretstorage, which opens one for every item it reads, can read them all.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("sessions a client opens without end")
struct SessionEvictionTests {
  @Test("past the limit the least recently used session closes; one in use keeps working")
  func leastRecentlyUsed() throws {
    let registry = SessionRegistry(maxPerClient: 3, maxTotal: 100)
    let first = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.7").0
    let second = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.7").0
    _ = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.7")
    _ = try registry.session(first.number, caller: ":1.7")  // first is used again
    _ = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.7")
    #expect(registry.count(ownedBy: ":1.7") == 3)
    #expect(throws: SessionError.noSession(second.number)) {
      try registry.session(second.number, caller: ":1.7")
    }
    #expect(try registry.session(first.number, caller: ":1.7").number == first.number)
    // Another client's sessions are its own.
    _ = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.8")
    #expect(registry.count(ownedBy: ":1.7") == 3)
  }

  @Test(
    "past the cap of all clients' sessions, a newcomer takes the least recently used session of the largest holder; a holder of as many as any other is refused"
  )
  func sharedCap() throws {
    let registry = SessionRegistry(maxPerClient: 8, maxTotal: 10)
    let first = try (0..<8).map { _ in try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.1").0 }
    for _ in 0..<5 { _ = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.2") }
    #expect(registry.count == 10)
    #expect(registry.count(ownedBy: ":1.1") == 5 && registry.count(ownedBy: ":1.2") == 5)
    #expect(throws: SessionError.tooManySessions(total: 10, owned: 5)) {
      try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.2")
    }
    // The sessions given up were the first holder's least recently used.
    #expect(throws: SessionError.noSession(first[0].number)) {
      try registry.session(first[0].number, caller: ":1.1")
    }
    #expect(try registry.session(first[7].number, caller: ":1.1").number == first[7].number)
    // A newcomer always gets one.
    _ = try registry.open(algorithm: "plain", clientKey: nil, owner: ":1.3")
    #expect(registry.count == 10 && registry.count(ownedBy: ":1.3") == 1)
  }

  @Test("clients that leave with OpenSession calls still in flight leave no session behind")
  func departedClientsLeaveNoSession() async throws {
    try await withProvider(.secretd) { instance in
      let watcher = try RawClient(address: instance.busAddress)
      @Sendable func openSessions() throws -> Int {
        let reply = try watcher.call(
          ObjectPaths.sessions, Interfaces.introspectable, "Introspect", .tuple([]))
        return (reply.child(0)?.string ?? "").components(separatedBy: "<node name=\"s").count - 1
      }
      let publicKey = try DiffieHellman.makeKeyPair().publicKey
      let open = DBusValue.tuple([
        .string(TransferSession.Algorithm.dh.rawValue), .variant(.bytes(publicKey)),
      ])
      for _ in 0..<30 {
        let client = try RawClient(address: instance.busAddress)
        // One answered call, so the client is served and its sessions counted before it leaves…
        try client.call(ObjectPaths.root, Interfaces.service, "OpenSession", open)
        #expect(try openSessions() >= 1)
        // …then a queue of calls it leaves without waiting for.
        for _ in 0..<64 {
          client.connection.sendWithoutReply(
            destination: client.destination, path: ObjectPaths.root, interface: Interfaces.service,
            method: "OpenSession", arguments: open)
        }
        client.connection.flush()
      }
      try await eventually("every departed client's sessions to close", seconds: 30) { try openSessions() == 0 }
    }
  }

  @Test("python secretstorage reads ten times --max-sessions items in one connection, opening a session for each")
  func secretstorageReadsTenTimesTheLimit() async throws {
    // Ten times the limit proves the eviction as 10,000 items at the default of 1,024 would,
    // in a tenth of the time a fresh machine's two cores need for those.
    let limit = 100
    let count = 10 * limit
    try await withProvider(.secretd, arguments: ["--max-sessions", "\(limit)"]) { instance in
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      for index in 0..<count {
        try client.createPlainItem(
          session: session, attributes: ["bulk": "yes", "n": "\(index)"], secret: Array("value-\(index)".utf8))
      }
      let unpacked = try instance.run(
        "tar", ["-xzf", SecretStorageSuiteTests.sdist(.newest).path, "-C", instance.bus.directory.path])
      try #require(unpacked.status == 0, "\(unpacked.stderrText)")
      let script = """
        import sys, secretstorage
        connection = secretstorage.dbus_init()
        collection = secretstorage.get_default_collection(connection)
        read = 0
        for item in collection.search_items({'bulk': 'yes'}):
            number = item.get_attributes()['n']
            assert item.get_secret() == ('value-' + number).encode(), number
            read += 1
        print(read)
        """
      var environment = instance.environment
      environment["PYTHONPATH"] = instance.bus.directory.appending(path: SecretStorageRelease.newest.sdist).path
      let run = try await runProcessOnOwnThread(
        "timeout", ["300", SecretStorageSuiteTests.python, "-c", script], environment: environment,
        in: instance.bus.directory)
      #expect(run.status == 0, "\(run.stderrText)")
      #expect(run.stdoutText == "\(count)\n", "\(run.stderrText)")
    }
  }
}
