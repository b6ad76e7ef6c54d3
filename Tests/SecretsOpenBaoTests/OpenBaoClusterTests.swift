import Foundation
import SecretTestSupport
import Secrets
import SecretsOpenBao
import Testing

// SecretKey over a 3-node Raft cluster: the leader killed while a save is in flight, standbys
// that answer reads and conflicts, and an election longer than the request timeout.
extension OpenBaoTests {
  @Suite("SecretKey over an OpenBao cluster")
  struct OpenBaoClusterTests {
    /// Which node the address list names first.
    enum FirstAddress: String, CustomStringConvertible, CaseIterable, Sendable {
      case leader, standby
      var description: String { "\(rawValue) first" }
    }

    @Test(
      "no acknowledged write is lost when the leader dies during a save, and each save is read back at once",
      arguments: FirstAddress.allCases)
    func theLeaderDiesDuringASave(first: FirstAddress) async throws {
      let cluster = try await OpenBaoCluster()
      defer { cluster.stop() }
      let leader = try #require(try cluster.leader())
      let standby = try #require(try cluster.standbys()?.first)
      let firstNode = first == .leader ? leader : standby
      // A proxy in front of each node that can hold an answer: the leader has stored the write,
      // and the save is still waiting for it when the leader is killed. The nodes' own addresses
      // come last, so that a standby's redirect to the leader goes to a configured server.
      let hold = try WriteHold(in: cluster.directory)
      var proxies: [WriteHoldingProxy] = []
      defer { proxies.forEach { $0.stop() } }
      for node in [firstNode] + (0..<3).filter({ $0 != firstNode }) {
        proxies.append(try await WriteHoldingProxy(to: cluster.addresses[node], hold: hold))
      }
      var environment = SharedEnvironment.test()
      environment.secretKeyStore = .openBao(
        cluster.configuration(addresses: proxies.map(\.address) + cluster.addresses))
      // Every version kept (10 by default), so each acknowledged value can be looked for.
      try cluster.bao(["write", "secret/config", "max_versions=100"], address: cluster.addresses[leader])
        .expectSuccess()
      try await environment.withValue {
        @Shared(.secret(service: "fleet", account: "counter")) var counter: Int = 0
        for value in 1...30 {
          $counter.withLock { $0 = value }
          if value == 11 {
            try hold.holdNextWrite()
            let save = Task { [shared = $counter] in try await shared.save() }
            try await eventually("the leader to store save 11 and a proxy to hold its answer", seconds: 60) {
              hold.isHolding
            }
            cluster.kill(node: leader)
            try hold.dropHeldAnswer()
            try await save.value
          } else {
            try await $counter.save()
          }
          // Read back at once from the first node that answers: with a standby first, a standby.
          try await $counter.load()
          #expect(counter == value, "save \(value) was not read back at once")
        }
      }
      try await eventually("a new leader", seconds: 60) { try cluster.leader() != nil }
      let newLeader = try #require(try cluster.leader())
      #expect(newLeader != leader)
      let stored = try cluster.versions(of: "secret/fleet/counter", address: cluster.addresses[newLeader])
      #expect(stored == (1...30).map(String.init), "each save stored once, in order: \(stored)")
    }

    @Test("a read from a standby right after a write sees it, and a load after a conflict gives the newer value")
    func aStandbyAnswersRightAfterAWriteAndAfterAConflict() async throws {
      let cluster = try await OpenBaoCluster()
      defer { cluster.stop() }
      let leader = try #require(try cluster.leader())
      let standbys = try #require(try cluster.standbys())
      // The client alone: only the storage index it sends back keeps the standby from
      // answering with a version older than the one just written through it.
      let onStandby = OpenBaoClient(cluster.configuration(addresses: [cluster.addresses[standbys[0]]]))
      for round in 1...50 {
        let written = try onStandby.write("raw", fields: ["value": "\(round)"], checkAndSet: nil)
        #expect(try onStandby.read("raw")?.version == written, "round \(round): the standby answered from before")
      }
      // Another machine writes through the other standby; this process lists a standby first.
      let otherMachine = OpenBaoClient(
        cluster.configuration(addresses: [cluster.addresses[standbys[1]], cluster.addresses[leader]]))
      var environment = SharedEnvironment.test()
      environment.secretKeyStore = .openBao(
        cluster.configuration(addresses: [standbys[0], leader, standbys[1]].map { cluster.addresses[$0] }))
      try await environment.withValue {
        @Shared(.secret(service: "fleet", account: "list")) var list: [String] = []
        for round in 1...10 {
          try otherMachine.append("theirs \(round)", to: "fleet/list")
          $list.withLock { $0.append("mine \(round)") }
          await #expect(throws: OpenBaoError.self, "round \(round): a save over their change") {
            try await $list.save()
          }
          try await $list.load()
          #expect(list.last == "theirs \(round)", "round \(round): the load after the conflict gave \(list)")
          // What a program does: make the change again on the value loaded, at once.
          var attempts = 0
          while true {
            attempts += 1
            $list.withLock { $0.append("mine \(round)") }
            do {
              try await $list.save()
              break
            } catch OpenBaoError.conflict where attempts < 3 {
              try await $list.load()
            }
          }
          #expect(attempts == 1, "round \(round): the retry took \(attempts) attempts")
        }
        let expected = (1...10).flatMap { ["theirs \($0)", "mine \($0)"] }
        #expect(list == expected)
      }
    }

    @Test("a save stored during an election longer than the request timeout is unconfirmed, then recognised")
    func aSaveDuringALongElection() async throws {
      // OpenBao's own Raft timing: the survivors take several seconds to notice the leader died.
      let cluster = try await OpenBaoCluster(raftTiming: .openBaoDefault)
      defer { cluster.stop() }
      let leader = try #require(try cluster.leader())
      let proxy = try await WriteHoldingProxy(to: cluster.addresses[leader], in: cluster.directory)
      defer { proxy.stop() }
      let others = (0..<3).filter { $0 != leader }.map { cluster.addresses[$0] }
      var environment = SharedEnvironment.test()
      environment.secretKeyStore = .openBao(
        cluster.configuration(
          addresses: [proxy.address] + others + [cluster.addresses[leader]], requestTimeout: .seconds(2)))
      try await environment.withValue {
        @Shared(.secret(service: "fleet", account: "election")) var counter: Int = 0
        $counter.withLock { $0 = 1 }
        try await $counter.save()
        $counter.withLock { $0 = 2 }
        try proxy.hold.holdNextWrite()
        let save = Task { [shared = $counter] in try await shared.save() }
        try await eventually("the leader to store the save and the proxy to hold its answer", seconds: 60) {
          proxy.hold.isHolding
        }
        cluster.kill(node: leader)
        try proxy.hold.dropHeldAnswer()
        do {
          try await save.value
          Issue.record("the save succeeded although no node could confirm it within the request timeout")
        } catch let error as OpenBaoError {
          guard case .writeUnconfirmed = error else {
            Issue.record("not an unconfirmed write: \(error)")
            return
          }
          #expect("\(error)".contains("may have been stored"))
        }
        try await eventually("a new leader", seconds: 120) { try cluster.leader() != nil }
        // The program saves again: its own stored write is recognised, not someone else's change.
        try await saveOnceANodeAnswers($counter)
        $counter.withLock { $0 = 3 }
        try await $counter.save()
      }
      let newLeader = try #require(try cluster.leader())
      #expect(newLeader != leader)
      #expect(
        try cluster.versions(of: "secret/fleet/election", address: cluster.addresses[newLeader]) == ["1", "2", "3"])
    }
  }
}

/// Saves, again while no node can confirm the write yet (a new leader still taking over, the
/// dead one still first in the list); any other error fails.
func saveOnceANodeAnswers(_ shared: Shared<Int>) async throws {
  let deadline = ContinuousClock.now + .seconds(120)
  while true {
    do {
      return try await shared.save()
    } catch OpenBaoError.writeUnconfirmed where ContinuousClock.now < deadline {
      continue
    } catch OpenBaoError.unreachable where ContinuousClock.now < deadline {
      continue
    }
  }
}

extension OpenBaoCluster {
  /// A configuration for these nodes (or the given addresses) with the root token and no polling.
  func configuration(addresses: [String]? = nil, requestTimeout: Duration = .seconds(30)) -> OpenBaoConfiguration {
    OpenBaoConfiguration(
      addresses: (addresses ?? self.addresses).compactMap(URL.init(string:)), authentication: .token(rootToken),
      pollInterval: .seconds(3600), requestTimeout: requestTimeout)
  }

  /// The value of each version of the KV secret at `path` (`secret/…`), oldest first. A node
  /// that has just become the leader may fail a read now and then (its mounts still being set
  /// up): each read is made again, up to twenty times, before it fails the test.
  func versions(of path: String, address: String) throws -> [String] {
    func reading(_ arguments: [String]) throws -> ProcessOutput {
      var output = try bao(arguments, address: address)
      for _ in 1..<20 where output.status != 0 { output = try bao(arguments, address: address) }
      try output.expectSuccess()
      return output
    }
    let metadata = try reading(["kv", "metadata", "get", "-format=json", path])
    let json = try JSONSerialization.jsonObject(with: Data(metadata.stdout)) as? [String: Any]
    guard let newest = (json?["data"] as? [String: Any])?["current_version"] as? Int, newest > 0 else { return [] }
    return try (1...newest).map { version in
      try reading(["kv", "get", "-version=\(version)", "-field=value", path]).stdoutText
    }
  }
}

extension OpenBaoClient {
  /// Appends `item` to the JSON list at `path`, as another machine's program does: read,
  /// change, check-and-set, again on a conflict.
  func append(_ item: String, to path: String) throws(OpenBaoError) {
    while true {
      let current = try read(path)
      let stored = Data((current?.field("value") ?? "[]").utf8)
      let list = ((try? JSONDecoder().decode([String].self, from: stored)) ?? []) + [item]
      let text = String(decoding: (try? JSONEncoder().encode(list)) ?? Data(), as: UTF8.self)
      do {
        try write(path, fields: ["value": text], checkAndSet: current?.version ?? 0)
        return
      } catch .conflict {
        continue
      }
    }
  }
}
