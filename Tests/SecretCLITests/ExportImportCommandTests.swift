// `secretctl export` and `import`: a collection carried whole to another provider through a file
// sealed to a passphrase, or copied straight from another provider's bus (gnome-keyring's items
// into secretd's persistent collection, as a user moving to secretd does).
import Foundation
import SecretClient
import SecretTestSupport
import Testing

@Suite("export and import: a collection carried to another provider")
struct ExportImportCommandTests {
  /// Three items as people keep them: text, binary with its own content type, and an expiry.
  static func storeSamples(_ instance: ProviderInstance, in collection: CollectionID) throws {
    let client = SecretClient(bus: .address(instance.busAddress))
    try client.write(
      SecretValue("hunter2"), attributes: ["service": "github.com", "account": "alice"], label: "GitHub", in: collection
    )
    try client.write(
      SecretValue(bytes: [0, 255, 10, 13, 0], contentType: "application/x-key"),
      attributes: ["service": "ssh", "account": "deploy"], label: "a binary key", in: collection)
    try client.write(
      SecretValue("temporary"), attributes: ["service": "ci", "xdg:expires": "4102444800"], label: "CI token",
      in: collection)
  }

  /// What an import must give back: every label, attribute set, content type and secret.
  static func contents(_ instance: ProviderInstance, in collection: CollectionID) throws -> [String] {
    let client = SecretClient(bus: .address(instance.busAddress))
    return try client.search([:], includeSecrets: true, in: collection).map { item in
      let secret = item.secret.map { Array($0.bytes).map(String.init).joined(separator: ",") } ?? "locked"
      let attributes = item.attributes.filter { $0.key != "xdg:schema" }.sorted { $0.key < $1.key }
      return "\(item.label) \(attributes) \(item.secret?.contentType ?? "") \(secret)"
    }.sorted()
  }

  @Test(
    "an export imported into another secretd's login gives back every item: label, attributes, content type, secret")
  func roundTrip() async throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "export-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: file) }
    var exported: [String] = []
    try await withProvider(.secretd) { source in
      try Self.storeSamples(source, in: .session)
      exported = try Self.contents(source, in: .session)
      let output = try secretctl(
        source, ["export", "--collection", "session", "--password-stdin", file], input: "carry me")
      #expect(output.status == 0, "\(output.stderrText)")
      #expect(output.stderrText.contains("exported 3 items"), "\(output.stderrText)")
    }
    let attributes = try FileManager.default.attributesOfItem(atPath: file)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let bytes = try Data(contentsOf: URL(filePath: file))
    for plaintext in ["hunter2", "temporary", "github.com", "GitHub", "application/x-key"] {
      #expect(bytes.range(of: Data(plaintext.utf8)) == nil, "\(plaintext) is readable in the file")
    }
    try await withProvider(.secretd, arguments: ["--persistent"]) { target in
      #expect(try secretctl(target, ["unlock", "--password-stdin"], input: "login").status == 0)
      let output = try secretctl(target, ["import", "--password-stdin", file], input: "carry me")
      #expect(output.status == 0, "\(output.stderrText)")
      #expect(try Self.contents(target, in: .default) == exported)
      // Again: each item replaces its own address, none is duplicated.
      #expect(try secretctl(target, ["import", "--password-stdin", file], input: "carry me").status == 0)
      #expect(try Self.contents(target, in: .default) == exported)
    }
  }

  @Test("two notes (items only their schema describes), and two items named alike, all arrive: none replaces another")
  func notesAreKeptApart() async throws {
    try await withProvider(.gnomeKeyring) { source in
      let client = SecretClient(bus: .address(source.busAddress))
      for (label, text) in [("first note", "one"), ("second note", "two")] {
        _ = try client.add(
          SecretValue(text), attributes: ["xdg:schema": "org.gnome.keyring.Note"], label: label, in: .session)
      }
      // Two items named alike, as a provider may hold them: both arrive too.
      for (label, text) in [("first twin", "three"), ("second twin", "four")] {
        _ = try client.add(SecretValue(text), attributes: ["service": "twins"], label: label, in: .session)
      }
      let expected = try Self.contents(source, in: .session)
      #expect(expected.count == 4, "\(expected)")
      try await withProvider(.secretd) { target in
        let output = try secretctl(target, ["import", "--from-bus", source.busAddress, "--from-collection", "session"])
        #expect(output.status == 0, "\(output.stderrText)")
        #expect(try Self.contents(target, in: .default) == expected)
      }
    }
  }

  @Test("a wrong passphrase, one changed byte, or a costly Argon2id imports nothing and says so (status 2)")
  func refusedFile() async throws {
    let file = FileManager.default.temporaryDirectory.appending(path: "export-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: file) }
    try await withProvider(.secretd) { instance in
      try Self.storeSamples(instance, in: .session)
      #expect(
        try secretctl(instance, ["export", "--collection", "session", "--password-stdin", file], input: "right")
          .status == 0)
      // The samples are changed first, so that an import that wrote anything would show.
      try SecretClient(bus: .address(instance.busAddress)).write(
        SecretValue("changed"), attributes: ["service": "github.com", "account": "alice"], in: .session, exactly: true)
      let before = try Self.contents(instance, in: .session)
      let again = try secretctl(instance, ["export", "--password-stdin", file], input: "right")
      #expect(again.status == 2 && again.stderrText.contains("exists"), "an export never overwrites a file")
      let wrong = try secretctl(
        instance, ["import", "--collection", "session", "--password-stdin", file], input: "wrong")
      #expect(wrong.status == 2)
      #expect(wrong.stderrText.contains("wrong passphrase"), "\(wrong.stderrText)")
      var bytes = try Data(contentsOf: URL(filePath: file))
      // Argon2id's memory (after the magic, the version and the passes) set to 2 GiB: refused
      // before any work, as a file from someone else must not exhaust this machine.
      var costly = bytes
      costly.replaceSubrange(22..<26, with: [0x00, 0x00, 0x20, 0x00])
      try costly.write(to: URL(filePath: file))
      let refused = try secretctl(
        instance, ["import", "--collection", "session", "--password-stdin", file], input: "right")
      #expect(refused.status == 2 && refused.stderrText.contains("Argon2id costs"), "\(refused.stderrText)")
      bytes[bytes.count - 20] ^= 1
      try bytes.write(to: URL(filePath: file))
      let changed = try secretctl(
        instance, ["import", "--collection", "session", "--password-stdin", file], input: "right")
      #expect(changed.status == 2 && changed.stderrText.contains("changed"), "\(changed.stderrText)")
      #expect(try Self.contents(instance, in: .session) == before, "nothing was imported")
    }
  }

  @Test("import --from-bus copies gnome-keyring's items into secretd's persistent collection")
  func fromAnotherProvider() async throws {
    try await withProvider(.gnomeKeyring) { source in
      try Self.storeSamples(source, in: .session)
      let expected = try Self.contents(source, in: .session)
      try await withProvider(.secretd, arguments: ["--persistent"]) { target in
        #expect(try secretctl(target, ["unlock", "--password-stdin"], input: "login").status == 0)
        let output = try secretctl(
          target, ["import", "--from-bus", source.busAddress, "--from-collection", "session"])
        #expect(output.status == 0, "\(output.stderrText)")
        #expect(output.stderrText.contains("imported 3 items"), "\(output.stderrText)")
        #expect(try Self.contents(target, in: .default) == expected)
      }
    }
  }
}
