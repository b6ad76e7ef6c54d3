import SecretClient
import SecretTestSupport
import Testing

@Suite("Round trips")
struct RoundTripTests {
  static let values: [(String, SecretValue)] = [
    ("text", SecretValue("correct horse battery staple")),
    ("binary", SecretValue(bytes: (0...255).map(UInt8.init), contentType: "application/octet-stream")),
    ("empty", SecretValue(bytes: [], contentType: "text/plain")),
    ("unicode", SecretValue("pässwörd 🔑 ключ 鍵\n")),
    (
      "1 MiB",
      SecretValue(
        bytes: (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }, contentType: "application/octet-stream")
    ),
  ]

  @Test(arguments: Provider.all)
  func valuesComeBackByteForByte(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      for (name, value) in Self.values {
        try await client.write(value, service: "round-trip", account: name)
        let read = try await client.read(service: "round-trip", account: name)
        #expect(read?.bytes == value.bytes, "\(name) changed on the way")
      }
    }
  }

  @Test(arguments: Provider.all)
  func writingAgainReplacesTheSecret(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("first"), service: "replace", account: "a")
      try await client.write(SecretValue("second"), service: "replace", account: "a")
      #expect(try await client.read(service: "replace", account: "a")?.text == "second")
      #expect(try await client.search(SecretClient.attributes(service: "replace", account: "a")).count == 1)
    }
  }

  @Test(arguments: Provider.all)
  func absentIsNilAndDeletingItIsFalse(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      #expect(try await client.read(service: "nobody", account: "none") == nil)
      #expect(try await client.delete(service: "nobody", account: "none") == false)
      try await client.write(SecretValue("x"), service: "gone", account: "a")
      #expect(try await client.delete(service: "gone", account: "a") == true)
      #expect(try await client.read(service: "gone", account: "a") == nil)
    }
  }

  @Test(arguments: Provider.all)
  func searchGivesLabelsAndAttributesButSecretsOnlyWhenAsked(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("one"), service: "search", account: "a", label: "Label A")
      try await client.write(SecretValue("two"), service: "search", account: "b", label: "Label B")
      try await client.write(SecretValue("other"), service: "elsewhere", account: "a")

      let found = try await client.search(["service": "search"]).sorted { $0.label < $1.label }
      #expect(found.map(\.label) == ["Label A", "Label B"])
      #expect(found.map { $0.attributes["account"] } == ["a", "b"])
      #expect(found.allSatisfy { $0.secret == nil })

      let withSecrets = try await client.search(["service": "search"], includeSecrets: true)
      #expect(Set(withSecrets.compactMap { $0.secret?.text }) == ["one", "two"])
      let inDefault = try await client.search(["service": "search"], includeSecrets: true, in: .default)
      #expect(Set(inDefault.compactMap { $0.secret?.text }) == ["one", "two"])
      #expect(
        try await client.search(
          ["service": "search"], includeSecrets: true, in: .path("/org/freedesktop/secrets/collection/none")
        ).isEmpty)
    }
  }

  @Test(arguments: Provider.all)
  func readPrefersTheItemWithExactlyTheseAttributes(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("backup"), attributes: ["service": "s", "account": "a", "backup": "1"])
      try await client.write(
        SecretValue("main"), attributes: SecretClient.attributes(service: "s", account: "a"), exactly: true)
      #expect(try await client.search(["service": "s"]).count == 2)
      #expect(try await client.read(service: "s", account: "a")?.text == "main")
    }
  }

  @Test(arguments: Provider.all)
  func exactlyIgnoresItemsWithMoreAttributes(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      let main = SecretClient.attributes(service: "s", account: "a")
      try await client.write(SecretValue("backup"), attributes: main.merging(["backup": "1"]) { $1 })
      #expect(try await client.read(main)?.text == "backup")
      #expect(try await client.read(main, exactly: true) == nil)
      #expect(try await client.delete(main, exactly: true) == false)
      try await client.write(SecretValue("main"), attributes: main, exactly: true)
      try await client.write(SecretValue("main again"), attributes: main, exactly: true)
      let all = try await client.search(["service": "s"])
      #expect(all.count == 2, "\(all.map { ($0.path, $0.attributes) })")
      #expect(try await client.read(main, exactly: true)?.text == "main again")
      #expect(try await client.delete(main, exactly: true) == true)
      #expect(try await client.read(main)?.text == "backup")
    }
  }

  @Test(arguments: Provider.all)
  func theDefaultAliasResolvesToACollectionThatHoldsTheItem(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("x"), service: "where", account: "a")
      let path = try await client.path(of: .default)
      let item = try #require(try await client.search(["service": "where"]).first)
      #expect(item.collectionPath == path)
      #expect(try await client.read(service: "where", account: "a", in: .default)?.text == "x")
      #expect(
        try await client.read(service: "where", account: "a", in: .path("/org/freedesktop/secrets/collection/none"))
          == nil)
      let collections = try await client.collections()
      #expect(collections.contains { $0.path == path && $0.itemCount >= 1 && !$0.isLocked })
    }
  }

  /// secretd only: gnome-keyring refuses any alias but `default` (NotSupported).
  @Test func aNewAliasAnswersAsItsCollectionUntilRemoved() async throws {
    try await withProvider(.secretd) { instance in
      let client = instance.client()
      try await client.write(SecretValue("x"), service: "alias", account: "a")
      let path = try await client.path(of: .default)
      try await client.setAlias("work", to: path)
      #expect(try await client.path(of: .alias("work")) == path)
      // libsecret stores through the alias's own object path, /org/freedesktop/secrets/aliases/work.
      try await client.write(SecretValue("through the alias"), service: "alias", account: "b", in: .alias("work"))
      #expect(try await client.read(service: "alias", account: "b", in: .default)?.text == "through the alias")
      // Its items answer under the alias too: /org/freedesktop/secrets/aliases/work/NUMBER.
      let item = try #require(try await client.search(["service": "alias", "account": "b"]).first)
      let number = try #require(item.path.split(separator: "/").last)
      let introspection = try instance.run(
        "gdbus",
        [
          "introspect", "--address", instance.busAddress, "--dest", instance.busName,
          "--object-path", "/org/freedesktop/secrets/aliases/work/\(number)",
        ])
      #expect(introspection.stdoutText.contains("org.freedesktop.Secret.Item"), "\(introspection.stderrText)")
      try await client.setAlias("work", to: nil)
      await #expect(throws: SecretError.self) { try await client.path(of: .alias("work")) }
    }
  }

  @Test(arguments: Provider.all)
  func collectionsAreReadNowNotRememberedFromAnEarlierCall(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let (client, other) = (instance.client(), instance.client())
      try await client.write(SecretValue("x"), service: "fresh", account: "a")
      let path = try await client.path(of: .default)
      let before = try #require(try await client.collections().first { $0.path == path })
      try await other.write(SecretValue("y"), service: "fresh", account: "b")
      try await other.lock(.default)
      let after = try #require(try await client.collections().first { $0.path == path })
      #expect(after.itemCount == before.itemCount + 1)
      #expect(!before.isLocked && after.isLocked)
    }
  }
}
