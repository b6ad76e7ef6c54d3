import Foundation
import SecretClient
import SecretTestSupport
import Testing

@Suite("get, set, delete, search through the binary")
struct ItemCommandTests {
  @Test(arguments: Provider.all)
  func pipedInputIsStoredExactlyAsGiven(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      for (account, input) in [
        ("newline", "s3cret\n"), ("bare", "s3cret"), ("two", "s3cret\n\n"), ("crlf", "s3cret\r\n"), ("empty", ""),
      ] {
        let set = try secretctl(instance, ["set", "svc", account], input: input)
        #expect(set.status == 0, "\(set.stderrText)")
        #expect(set.stdout.isEmpty && set.stderr.isEmpty)
        let get = try secretctl(instance, ["get", "svc", account])
        #expect(get.status == 0)
        #expect(get.stdoutText == input, "\(account): stdout is not a terminal, so no newline is added")
      }
    }
  }

  @Test(arguments: Provider.all)
  func trimDropsOneTrailingNewline(provider: Provider) async throws {
    try await withProvider(provider) { instance async throws in
      for (input, stored) in [("a\n", "a"), ("a\n\n", "a\n"), ("a", "a"), ("a\r\n", "a")] {
        #expect(try secretctl(instance, ["set", "--trim", "trim", "x"], input: input).status == 0)
        #expect(try secretctl(instance, ["get", "trim", "x"]).stdoutText == stored)
      }
    }
  }

  @Test(arguments: Provider.all)
  func binarySecretsComeBackByteForByte(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let bytes = (0...255).map(UInt8.init) + [0, 0, 255, 10]
      #expect(try secretctl(instance, ["set", "bin", "all"], bytes: bytes).status == 0)
      let get = try secretctl(instance, ["get", "bin", "all"])
      #expect(get.stdout == bytes)
      let json = try secretctl(instance, ["get", "--json", "bin", "all"])
      let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
      #expect(object["secretBase64"] as? String == Data(bytes).base64EncodedString())
      #expect(object["secret"] == nil)
    }
  }

  @Test(arguments: Provider.all)
  func getJSONNamesTheItemAndGivesTheSecret(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "svc", "alice"], input: "pässwörd 🔑")
      let get = try secretctl(instance, ["get", "--json", "svc", "alice"])
      let object = try #require(try JSONSerialization.jsonObject(with: Data(get.stdout)) as? [String: Any])
      #expect(object["service"] as? String == "svc")
      #expect(object["account"] as? String == "alice")
      #expect(object["secret"] as? String == "pässwörd 🔑")
      #expect(object["contentType"] as? String == "text/plain")
    }
  }

  @Test(arguments: Provider.all)
  func setReplacesAndDeleteRemoves(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "--label", "First", "svc", "a"], input: "one")
      _ = try secretctl(instance, ["set", "svc", "a"], input: "two")
      #expect(try secretctl(instance, ["get", "svc", "a"]).stdoutText == "two")
      #expect(try await instance.client().search(["service": "svc"]).count == 1)
      let delete = try secretctl(instance, ["delete", "svc", "a"])
      #expect(delete.status == 0 && delete.stderr.isEmpty)
      let gone = try secretctl(instance, ["get", "svc", "a"])
      #expect(gone.status == 1)
      #expect(gone.stdout.isEmpty)
      #expect(gone.stderrIsOneMessage)
      #expect(gone.stderrText.contains("secretctl set svc a"))
      let again = try secretctl(instance, ["delete", "svc", "a"])
      #expect(again.status == 1 && again.stderrIsOneMessage)
    }
  }

  @Test(arguments: Provider.all)
  func deletingAServiceWithSeveralAccountsNeedsAll(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "many", "a"], input: "1")
      _ = try secretctl(instance, ["set", "many", "b"], input: "2")
      let refused = try secretctl(instance, ["delete", "many"])
      #expect(refused.status == 2)
      #expect(refused.stderrText.contains("--all"))
      #expect(try secretctl(instance, ["get", "many", "a"]).status == 0)
      #expect(try secretctl(instance, ["delete", "--all", "many"]).status == 0)
      #expect(try secretctl(instance, ["search", "service=many"]).status == 1)
    }
  }

  @Test(arguments: Provider.all)
  func deletingAnAccountThatAlsoMatchesABackupNeedsAll(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "kept", "a"], input: "current")
      let backup = try instance.run(
        "secret-tool", ["store", "--label=backup", "service", "kept", "account", "a", "backup", "1"],
        input: Array("old".utf8))
      #expect(backup.status == 0)
      let refused = try secretctl(instance, ["delete", "kept", "a"])
      #expect(refused.status == 2)
      #expect(refused.stderrText.contains("--all"))
      #expect(try instance.client().search(["service": "kept"]).count == 2)
      #expect(try secretctl(instance, ["delete", "--all", "kept", "a"]).status == 0)
      #expect(try instance.client().search(["service": "kept"]).isEmpty)
    }
  }

  @Test(arguments: Provider.all)
  func searchShowsLabelsAndAttributesButSecretsOnlyWhenAsked(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "--label", "Label A", "search", "a"], input: "secret-one")
      _ = try secretctl(instance, ["set", "--label", "Label B", "search", "b"], input: "secret-two")
      _ = try secretctl(instance, ["set", "other", "a"], input: "secret-three")

      let plain = try secretctl(instance, ["search", "service=search"])
      #expect(plain.status == 0)
      #expect(plain.stdoutText.contains("label = Label A"))
      #expect(plain.stdoutText.contains("attribute.account = b"))
      #expect(!plain.stdoutText.contains("secret-"))
      #expect(!plain.stdoutText.contains("other"))

      let shown = try secretctl(instance, ["search", "--show-secrets", "service=search", "account=a"])
      #expect(shown.stdoutText.contains("secret = secret-one"))
      #expect(!shown.stdoutText.contains("secret-two"))

      let json = try secretctl(instance, ["search", "--json", "service=search"])
      let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
      #expect(items.map { $0["label"] as? String } == ["Label A", "Label B"])
      #expect(items.allSatisfy { $0["secret"] == nil })
      #expect((items.first?["attributes"] as? [String: String])?["service"] == "search")

      let all = try secretctl(instance, ["search", "--json"])
      #expect(try #require(try JSONSerialization.jsonObject(with: Data(all.stdout)) as? [Any]).count == 3)

      let none = try secretctl(instance, ["search", "service=nothing"])
      #expect(none.status == 1 && none.stdout.isEmpty)
      let bad = try secretctl(instance, ["search", "service"])
      #expect(bad.status == 2 && bad.stderrIsOneMessage)
    }
  }

  @Test(arguments: Provider.all)
  func secretToolReadsWhatSecretctlSetsAndTheReverse(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "interop", "ctl"], input: "from secretctl ✓")
      let lookup = try instance.run("secret-tool", ["lookup", "service", "interop", "account", "ctl"])
      #expect(lookup.status == 0)
      #expect(lookup.stdoutText == "from secretctl ✓")

      let store = try instance.run(
        "secret-tool", ["store", "--label=From secret-tool", "service", "interop", "account", "tool"],
        input: Array("from tool".utf8))
      #expect(store.status == 0)
      #expect(try secretctl(instance, ["get", "interop", "tool"]).stdoutText == "from tool")
      #expect(try secretctl(instance, ["delete", "interop", "tool"]).status == 0)
      #expect(try instance.run("secret-tool", ["lookup", "service", "interop", "account", "tool"]).stdout.isEmpty)
    }
  }

  @Test(arguments: Provider.all)
  func ttlIsHonouredOnSecretdAndRefusedElsewhere(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let isSecretd = try await instance.client().provider().isSecretd
      let set = try secretctl(instance, ["set", "--ttl", "1h", "ttl", "a"], input: "token")
      if isSecretd {
        #expect(set.status == 0)
        let item = try #require(try await instance.client().search(["service": "ttl"]).first)
        let expires = try #require(item.attributes["xdg:expires"].flatMap { UInt64($0) })
        let now = UInt64(Date().timeIntervalSince1970)
        #expect(expires > now + 3500 && expires <= now + 3600)
      } else {
        #expect(set.status == 3)
        #expect(set.stderrIsOneMessage)
        #expect(set.stderrText.contains("--ttl needs secretd"))
        #expect(try secretctl(instance, ["get", "ttl", "a"]).status == 1, "nothing was stored")
      }
      let bad = try secretctl(instance, ["set", "--ttl", "soon", "ttl", "a"], input: "token")
      #expect(bad.status == 2 && bad.stderrText.contains("not a duration"))
    }
  }

  @Test(arguments: Provider.all)
  func aMissingCollectionIsNotFound(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "c", "a"], input: "x")
      let get = try secretctl(instance, ["get", "--collection", "/org/freedesktop/secrets/collection/none", "c", "a"])
      #expect(get.status == 1)
      #expect(try secretctl(instance, ["get", "--collection", "default", "c", "a"]).stdoutText == "x")
    }
  }
}
