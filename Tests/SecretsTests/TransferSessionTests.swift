import SecretClient
import SecretTestSupport
import Testing

// Secrets are read and written through SecretClient's own transfer session (short DH
// exponents), one per connection, with the provider it checked; libsecret opens none.
@Suite("Transfer sessions of readers")
struct TransferSessionTests {
  @Test(arguments: Provider.all)
  func aClientOpensOneSessionForAllItsReadsAndWrites(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      try await instance.client().write(SecretValue("read me"), service: "sessions", account: "a")
      let calls = try await CallCounter(instance, members: ["OpenSession"])
      let before = try await calls.count("OpenSession")
      let reader = instance.client()
      for _ in 0..<3 {
        #expect(try await reader.read(service: "sessions", account: "a")?.text == "read me")
      }
      #expect(try await calls.count("OpenSession") == before + 1, "three reads opened other than one session")
      try await reader.write(SecretValue("written"), service: "sessions", account: "b")
      #expect(try await reader.read(service: "sessions", account: "b")?.text == "written")
      #expect(try await calls.count("OpenSession") == before + 1, "the write opened a session of its own")
    }
  }

  @Test(arguments: Provider.all)
  func secretctlGetOpensExactlyOneSession(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      try await instance.client().write(SecretValue("cli"), service: "sessions", account: "cli")
      let calls = try await CallCounter(instance, members: ["OpenSession"])
      let before = try await calls.count("OpenSession")
      let get = try instance.run(try builtExecutable("secretctl").path, ["get", "sessions", "cli"])
      #expect(get.status == 0)
      #expect(get.stdoutText == "cli")
      #expect(try await calls.count("OpenSession") == before + 1)
    }
  }

  /// A restarted provider numbers its sessions from the start again, so an old session path may
  /// name another session now: a client that read before the restart and writes after it reads
  /// the new provider's secret, never one decrypted with the old session's key.
  @Test(arguments: Provider.all)
  func afterTheProviderRestartsAReadIsNeverDecryptedWithAnotherSessionsKey(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      let sessions = try await OpenedSessions(instance)
      // Session 1 is another client's, session 2 the client's own, for reading.
      try await instance.client().write(SecretValue("before"), service: "restart", account: "a")
      #expect(try await client.read(service: "restart", account: "a")?.text == "before")
      let before = try await sessions.paths(expecting: 2)
      instance.stopProvider()
      try instance.startProvider()
      // Again session 1 another client's; session 2 now the client's own, opened for its write.
      try await instance.client().write(SecretValue("other"), service: "restart", account: "b")
      try await client.write(SecretValue("after"), service: "restart", account: "a")
      // The collision this test is about: the client's reading session before the restart and
      // libsecret's session for its write after it have the same path (and different keys).
      let opened = try await sessions.paths(expecting: 4)
      #expect(before.count == 2 && opened.count == 4, "\(opened)")
      #expect(opened[3] == before[1], "no collision to test: \(opened)")
      #expect(try await client.read(service: "restart", account: "a")?.text == "after")
      #expect(try await client.read(service: "restart", account: "a")?.text == "after")
    }
  }
}
