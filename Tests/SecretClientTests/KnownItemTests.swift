// What a connection knows of items without asking (the item mirror, kept by the provider's
// signals) makes reads and writes by address cheaper, never wrong: changes other clients make
// are seen by the next call, and the calls left are the ones libsecret's own make.
import SecretClient
import SecretTestSupport
import Testing

@Suite("Items the connection already knows")
struct KnownItemTests {
  /// Two calls by address, so that the connection starts keeping what it learns.
  private static func warmUp(_ client: SecretClient) async throws {
    try await client.write(SecretValue("1"), service: "s", account: "a")
    try await client.write(SecretValue("2"), service: "s", account: "a")
    #expect(try await client.read(service: "s", account: "a")?.text == "2")
  }

  @Test(arguments: Provider.all)
  func anItemAnotherClientGivesMoreAttributesIsNoLongerReadByItsOldAddress(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await Self.warmUp(client)
      let path = try #require(try await client.search(["service": "s"]).first?.path)
      let set = try instance.run(
        "gdbus",
        [
          "call", "--address", instance.busAddress, "--dest", instance.busName, "--object-path", path, "--method",
          "org.freedesktop.DBus.Properties.Set", "org.freedesktop.Secret.Item", "Attributes",
          "<{'service': 's', 'account': 'a', 'backup': '1'}>",
        ])
      #expect(set.status == 0, "\(set.stderrText)")
      #expect(try await client.read(service: "s", account: "a") == nil)
      #expect(
        try await client.read(["service": "s", "account": "a", "backup": "1"], exactly: true)?.text == "2",
        "positive control: the item is there, under its new address")
    }
  }

  @Test(arguments: Provider.all)
  func aSecondItemAnotherToolCreatesIsRemovedByTheNextWrite(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await Self.warmUp(client)
      let script = """
        import secretstorage
        collection = secretstorage.get_default_collection(secretstorage.dbus_init())
        collection.create_item("again", {"service": "s", "account": "a"}, b"other", replace=False)
        """
      let created = try instance.run("/usr/bin/python3", ["-c", script])
      #expect(created.status == 0, "\(created.stderrText)")
      // Counted by another connection: this one must learn of the new item from the signals.
      #expect(try await instance.client().search(["service": "s"]).count == 2, "positive control: two items")
      try await client.write(SecretValue("3"), service: "s", account: "a")
      let items = try await client.search(["service": "s"], includeSecrets: true)
      #expect(items.map { $0.secret?.text } == ["3"], "\(items)")
    }
  }

  /// What libsecret's `secret_service_store_sync` and `lookup_sync` send: one `CreateItem`; a
  /// `SearchItems` and a `GetSecrets`.
  @Test(arguments: Provider.all)
  func aKnownItemIsWrittenAndReadWithTheCallsLibsecretMakes(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await Self.warmUp(client)
      let log = try await BusCallLog(instance)
      var value: SecretValue?
      let read = try await log.calls { value = try await client.read(service: "s", account: "a") }
      #expect(read == ["SearchItems", "GetSecrets"])
      #expect(value?.text == "2")
      let written = try await log.calls {
        try await client.write(SecretValue("3"), service: "s", account: "a")
      }
      // Elsewhere a write replaces only after a search: gnome-keyring's replace would take an
      // item with more attributes too.
      #expect(written == (provider == .secretd ? ["CreateItem"] : ["ReadAlias", "SearchItems", "CreateItem"]))
      #expect(try await client.read(service: "s", account: "a")?.text == "3")
    }
  }
}
