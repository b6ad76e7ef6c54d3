import SecretClient
import SecretTestSupport
import Testing

// Secrets are read through SecretClient's own transfer session (short DH exponents), one per
// connection; libsecret's session is opened only when the client first writes.
@Suite("Transfer sessions of readers")
struct TransferSessionTests {
  @Test(arguments: Provider.all)
  func aClientOpensOneSessionForAllItsReadsAndLibsecretsOnlyForAWrite(provider: Provider) async throws {
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
      #expect(try await calls.count("OpenSession") == before + 2, "the write should open libsecret's session, once")
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
}
