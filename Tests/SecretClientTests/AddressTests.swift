import SecretClient
import SecretTestSupport
import Testing

/// Which item an address names: its attributes but the schema name and the expiry.
@Suite("The item an address names")
struct AddressTests {
  static let later = "4102444800"

  @Test("the schema name and the expiry do not name an item; every other attribute does, xdg: ones too")
  func theSchemaAndTheExpiryAreLeftOutAndNothingElse() {
    let address = ["service": "s", "account": "a"]
    for described in [
      address, address.merging(["xdg:schema": "org.freedesktop.Secret.Generic"]) { $1 },
      address.merging(["xdg:expires": Self.later]) { $1 }, address.merging(["expires-at": Self.later]) { $1 },
    ] {
      #expect(SecretClient.isNamed(described, by: address), "\(described)")
      #expect(SecretClient.isNamed(address, by: described), "\(described), either way")
    }
    for more in ["xdg:origin", "backup", "account2"] {
      #expect(!SecretClient.isNamed(address.merging([more: "x"]) { $1 }, by: address), "\(more)")
    }
    #expect(!SecretClient.isNamed(["service": "s"], by: address))
    #expect(!SecretClient.isNamed(["service": "s", "account": "b"], by: address))
  }

  /// gnome-keyring keeps `expires-at` as any attribute; the address still names the item.
  @Test(arguments: Provider.all)
  func anItemWithAnExpiryIsReadReplacedAndDeletedByItsAddress(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let stored = try instance.run(
        "secret-tool", ["store", "--label=x", "service", "s", "account", "a", "expires-at", Self.later],
        input: Array("1".utf8))
      #expect(stored.status == 0, "\(stored.stderrText)")
      let client = instance.client()
      #expect(try await client.read(service: "s", account: "a")?.text == "1")
      try await client.write(SecretValue("2"), service: "s", account: "a")
      let items = try await client.search(["service": "s"])
      #expect(items.count == 1, "replaced, not added beside: \(items)")
      #expect(items.first?.attributes["expires-at"] == nil, "written without one, the item has no expiry")
      #expect(try await client.read(service: "s", account: "a")?.text == "2")
      #expect(try await client.delete(service: "s", account: "a"))
      #expect(try await client.search(["service": "s"]).isEmpty)
    }
  }

  @Test(arguments: Provider.all)
  func anItemWithAnotherXdgAttributeIsNotTheOneTheAddressNames(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await client.write(SecretValue("other"), attributes: ["service": "s", "account": "a", "xdg:origin": "x"])
      #expect(try await client.read(service: "s", account: "a") == nil)
      #expect(try await client.delete(service: "s", account: "a") == false)
      try await client.write(SecretValue("named"), service: "s", account: "a")
      let items = try await client.search(["service": "s"], includeSecrets: true)
      #expect(items.count == 2, "the other item was left alone: \(items)")
      #expect(items.first { $0.attributes["xdg:origin"] != nil }?.secret?.text == "other")
    }
  }

  /// Two items one address names, as a tool that creates without replacing leaves them: a write
  /// by address leaves one, holding the new secret.
  @Test(arguments: Provider.all)
  func aWriteByAddressLeavesOneItemWhereAnotherToolLeftTwo(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let script = """
        import secretstorage
        collection = secretstorage.get_default_collection(secretstorage.dbus_init())
        collection.create_item("one", {"service": "s", "account": "a"}, b"1", replace=False)
        collection.create_item("two", {"service": "s", "account": "a", "expires-at": "\(Self.later)"}, b"1")
        """
      let created = try instance.run("/usr/bin/python3", ["-c", script])
      #expect(created.status == 0, "\(created.stderrText)")
      let client = instance.client()
      #expect(try await client.search(["service": "s"]).count == 2)
      try await client.write(SecretValue("2"), service: "s", account: "a")
      let items = try await client.search(["service": "s"], includeSecrets: true)
      #expect(items.count == 1, "\(items)")
      #expect(items.first?.secret?.text == "2")
    }
  }
}
