import SecretClient
import SecretTestSupport
import Testing

@Suite("Interoperability with secret-tool")
struct InteropTests {
  @Test(arguments: Provider.all)
  func secretToolReadsWhatTheClientWrites(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      try await instance.client().write(SecretValue("from swift ✓"), service: "interop", account: "swift")
      let lookup = try instance.run("secret-tool", ["lookup", "service", "interop", "account", "swift"])
      #expect(lookup.status == 0)
      #expect(lookup.stdoutText == "from swift ✓")
    }
  }

  @Test(arguments: Provider.all)
  func theClientReadsWhatSecretToolStores(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let store = try instance.run(
        "secret-tool", ["store", "--label=From secret-tool", "service", "interop", "account", "tool"],
        input: Array("from secret-tool\n".utf8))
      #expect(store.status == 0, "\(store.stderrText)")
      let read = try await instance.client().read(service: "interop", account: "tool")
      #expect(read?.text == "from secret-tool\n")
      let item = try await instance.client().search(["service": "interop"]).first
      #expect(item?.label == "From secret-tool")
    }
  }

  @Test(arguments: Provider.all)
  func aChangeBySecretToolArrivesOnTheChangeSequence(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      let changes = try await client.changes(in: .default)
      _ = try instance.run(
        "secret-tool", ["store", "--label=watched", "service", "watched", "account", "a"], input: Array("v1".utf8))
      _ = try instance.run("secret-tool", ["clear", "service", "watched", "account", "a"])
      let seen = try await withDeadline(seconds: 10, "two change signals") {
        var kinds: [ItemChange.Kind] = []
        for await change in changes {
          kinds.append(change.kind)
          if kinds.contains(.deleted) { break }
        }
        return kinds
      }
      #expect(seen.first == .created)
      #expect(seen.last == .deleted)
    }
  }
}

@Suite("The README's example")
struct ExampleTests {
  @Test(arguments: Provider.all)
  func theSecretClientExampleRunsAsWrittenAndLeavesTheREADMEsFirstItemAlone(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let first = ["service", "example.org", "account", "alice"]
      let stored = try instance.run("secret-tool", ["store", "--label=Example"] + first, input: Array("hunter2".utf8))
      try #require(stored.status == 0, "\(stored.stderrText)")
      let output = try instance.run(try builtExecutable("secret-client-example").path, [])
      #expect(output.status == 0)
      #expect(output.stdoutText == "stored and read back 7 bytes for bob@example.org\nabsent after delete: true\n")
      #expect(try instance.run("secret-tool", ["lookup"] + first).stdoutText == "hunter2")
    }
  }
}
