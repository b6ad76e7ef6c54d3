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
        ("newline", "s3cret\n"), ("bare", "s3cret"), ("two", "s3cret\n\n"), ("crlf", "s3cret\r\n"), ("one", "\n"),
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
  func emptyInputStoresNothingUnlessAllowEmptySaysItIsMeant(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      #expect(try secretctl(instance, ["set", "empty", "test"], input: "old").status == 0)
      // `cat /nonexistent | secretctl set …`: nothing arrives, and the old secret must survive.
      let empty = try secretctl(instance, ["set", "empty", "test"], input: "")
      #expect(empty.status == 2)
      #expect(empty.stderrIsOneMessage && empty.stderrText.contains("nothing on stdin"), "\(empty.stderrText)")
      #expect(try secretctl(instance, ["get", "empty", "test"]).stdoutText == "old")
      let trimmedToNothing = try secretctl(instance, ["set", "--trim", "empty", "test"], input: "\n")
      #expect(trimmedToNothing.status == 2 && trimmedToNothing.stderrText.contains("nothing on stdin"))
      #expect(try secretctl(instance, ["get", "empty", "test"]).stdoutText == "old")
      // Positive control: said to be meant, an empty secret is stored.
      let allowed = try secretctl(instance, ["set", "--allow-empty", "empty", "test"], input: "")
      #expect(allowed.status == 0, "\(allowed.stderrText)")
      let get = try secretctl(instance, ["get", "empty", "test"])
      #expect(get.status == 0 && get.stdout.isEmpty)
    }
  }

  @Test(
    "SERVICE alone is the secret with no account in get, delete, read, exec, run, inject and the Swift API; what was not named is listed, never touched",
    arguments: Provider.all)
  func serviceAloneMeansTheSecretWithNoAccountEverywhere(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      #expect(try secretctl(instance, ["set", "svc", "acc"], input: "account's").status == 0)
      let marker = instance.bus.directory.appending(path: "ran").path
      let template = instance.bus.directory.appending(path: "t.tpl")
      try Data("x={{ secret://svc }}".utf8).write(to: template)
      let refusals = [
        try secretctl(instance, ["get", "svc"]),
        try secretctl(instance, ["read", "secret://svc"]),
        try secretctl(instance, ["exec", "-e", "V=svc", "/bin/sh", "-c", "touch '\(marker)'"]),
        try secretctl(instance, ["run", "-e", "V=secret://svc", "--", "/bin/sh", "-c", "touch '\(marker)'"]),
        try secretctl(instance, ["inject", "-i", template.path]),
        try secretctl(instance, ["delete", "svc"]),
      ]
      for refused in refusals {
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stderrText)")
        #expect(refused.stderrIsOneMessage && refused.stderrText.contains("account \"acc\""), "\(refused.stderrText)")
        #expect(!refused.stderrText.contains("account's"), "a secret in a message")
      }
      #expect(!FileManager.default.fileExists(atPath: marker))
      #expect(try await client.read(service: "svc") == nil)
      #expect(try await client.delete(service: "svc") == false)
      #expect(try secretctl(instance, ["get", "svc", "acc"]).stdoutText == "account's", "nothing was deleted")

      // With a secret stored with no account, every command means that one, and only that one.
      #expect(try secretctl(instance, ["set", "svc"], input: "service's").status == 0)
      #expect(try secretctl(instance, ["get", "svc"]).stdoutText == "service's")
      #expect(try secretctl(instance, ["read", "secret://svc"]).stdoutText == "service's")
      #expect(
        try secretctl(instance, ["exec", "-e", "V=svc", "/bin/sh", "-c", "printf %s \"$V\""]).stdoutText == "service's")
      #expect(try secretctl(instance, ["inject", "-i", template.path]).stdoutText == "x=service's")
      #expect(try await client.read(service: "svc")?.text == "service's")
      #expect(try secretctl(instance, ["get", "svc", "acc"]).stdoutText == "account's", "set svc replaced svc/acc")
      #expect(try secretctl(instance, ["delete", "svc"]).status == 0)
      #expect(try secretctl(instance, ["get", "svc", "acc"]).stdoutText == "account's", "delete svc removed svc/acc")
      try await client.write(SecretValue("api"), service: "svc")
      #expect(
        try await client.read(service: "svc", account: "acc")?.text == "account's", "write(service:) replaced svc/acc")
      #expect(try await client.delete(service: "svc"))
      #expect(try await client.read(service: "svc", account: "acc")?.text == "account's")
    }
  }

  @Test(arguments: Provider.all)
  func deleteRemovesOneItemAndMoreOnlyWithAll(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "kept", "a"], input: "current")
      let backup = try instance.run(
        "secret-tool", ["store", "--label=backup", "service", "kept", "account", "a", "backup", "1"],
        input: Array("old".utf8))
      #expect(backup.status == 0)
      _ = try secretctl(instance, ["set", "kept", "b"], input: "other")
      // The named item goes; the backup (one attribute more) and the other account stay.
      let delete = try secretctl(instance, ["delete", "kept", "a"])
      #expect(delete.status == 0, "\(delete.stderrText)")
      let left = try await instance.client().search(["service": "kept"]).map(\.attributes)
      #expect(left.count == 2)
      #expect(left.contains { $0["backup"] == "1" } && left.contains { $0["account"] == "b" })
      // The same address in two collections: which one is meant is not guessed.
      _ = try secretctl(instance, ["set", "twice"], input: "default")
      _ = try secretctl(instance, ["set", "--collection", "session", "twice"], input: "session")
      let defaultPath = try await instance.client().path(of: .default)
      let sessionPath = try await instance.client().path(of: .session)
      if defaultPath != sessionPath {
        let ambiguous = try secretctl(instance, ["delete", "twice"])
        #expect(ambiguous.status == 2 && ambiguous.stderrText.contains("--collection"), "\(ambiguous.stderrText)")
        #expect(try await instance.client().search(["service": "twice"]).count == 2)
      }
      // --all takes every item whose attributes include the address.
      #expect(try secretctl(instance, ["delete", "--all", "kept"]).status == 0)
      #expect(try await instance.client().search(["service": "kept"]).isEmpty)
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

  @Test(
    "set refuses a secret larger than the provider takes with the size in the message, reading no more than one byte past it, and stores nothing"
  )
  func setRefusesASecretLargerThanTheProviderTakes() async throws {
    try await withProvider(.secretd, arguments: ["--max-secret-size", "1K"]) { instance in
      // Positive control: the largest secret it takes is stored.
      let largest = try secretctl(instance, ["set", "big", "a"], bytes: Array(repeating: 0x61, count: 1024))
      #expect(largest.status == 0, "\(largest.stderrText)")
      // An endless input: set ends only if it stops reading at the limit.
      let endless = try instance.run("sh", ["-c", "cat /dev/zero | \"$0\" set big b", try secretctlPath()])
      #expect(endless.status == 2, "\(endless.stderrText)")
      #expect(endless.stderrIsOneMessage)
      #expect(endless.stderrText.contains("larger than 1024 bytes"), "\(endless.stderrText)")
      #expect(try secretctl(instance, ["get", "big", "b"]).status == 1)
    }
  }
}
