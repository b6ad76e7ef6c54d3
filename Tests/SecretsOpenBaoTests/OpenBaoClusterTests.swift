import Foundation
import SecretTestSupport
import Secrets
import SecretsOpenBao
import Testing

// A SecretKey writing to a 3-node Raft cluster while its leader is killed.
extension OpenBaoTests {
  @Suite("SecretKey over an OpenBao cluster")
  struct OpenBaoClusterTests {
    @Test func noAcknowledgedWriteIsLostWhenTheLeaderDiesAndWritesResumeAfterTheElection() async throws {
      let cluster = try await OpenBaoCluster()
      defer { cluster.stop() }
      let configuration = OpenBaoConfiguration(
        addresses: cluster.addresses.compactMap(URL.init(string:)), authentication: .token(cluster.rootToken),
        pollInterval: .seconds(3600), requestTimeout: .seconds(30))
      var environment = SharedEnvironment.test()
      environment.secretKeyStore = .openBao(configuration)
      let leader = try #require(try cluster.leader())
      // Every version kept (10 by default), so each acknowledged value can be looked for.
      try cluster.bao(["write", "secret/config", "max_versions=100"], address: cluster.addresses[leader])
        .expectSuccess()
      let acknowledged = try await environment.withValue {
        @Shared(.secret(service: "fleet", account: "counter")) var counter: Int = 0
        var acknowledged: [Int] = []
        for value in 1...30 {
          if value == 11 { cluster.kill(node: leader) }
          $counter.withLock { $0 = value }
          do {
            try await $counter.save()
            acknowledged.append(value)
          } catch OpenBaoError.conflict {
            // A write the dying leader committed without answering: load it and go on.
            try await $counter.load()
          }
        }
        return acknowledged
      }
      #expect(acknowledged.last == 30, "writes did not resume after the election")
      #expect(acknowledged.count >= 28)
      let survivor = cluster.addresses[(leader + 1) % 3]
      #expect(try cluster.leader() != leader)
      var stored: Set<Int> = []
      let metadata = try cluster.bao(
        ["kv", "metadata", "get", "-format=json", "secret/fleet/counter"], address: survivor)
      let json = try JSONSerialization.jsonObject(with: Data(metadata.stdout)) as? [String: Any]
      let newest = try #require((json?["data"] as? [String: Any])?["current_version"] as? Int)
      for version in 1...newest {
        let output = try cluster.bao(
          ["kv", "get", "-version=\(version)", "-field=value", "secret/fleet/counter"], address: survivor)
        if let value = Int(output.stdoutText) { stored.insert(value) }
      }
      #expect(
        Set(acknowledged).subtracting(stored).isEmpty,
        "acknowledged writes lost: \(Set(acknowledged).subtracting(stored).sorted())")
    }
  }
}
