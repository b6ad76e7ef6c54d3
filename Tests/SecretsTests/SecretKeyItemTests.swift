import Foundation
import SecretTestSupport
import Secrets
import Testing

/// The item a SecretKey writes, as clients that are not ours see it.
@Suite("SecretKey: the item it writes")
struct SecretKeyItemTests {
  @Test(arguments: Provider.all, [CollectionID.default, .session])
  func theItemHasExactlyServiceAndAccountInTheChosenCollection(provider: Provider, collection: CollectionID)
    async throws
  {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "exact", account: "alice", collection: collection)) var value: Int = 0
      $value.withLock { $0 = 7 }
      try await $value.save()
      let items = try secretToolItems(instance, service: "exact")
      let item = try #require(items.count == 1 ? items.first : nil, "\(items)")
      #expect(item.attributes == ["service": "exact", "account": "alice"])
      #expect(item.label == "exact (alice)")
      #expect(item.secret == "7")
      // secret-tool prints only the item's last path component: ask the service itself.
      let collectionPath = try await instance.client().path(of: collection)
      let search = try instance.run(
        "gdbus",
        [
          "call", "--session", "--dest", instance.busName, "--object-path", "/org/freedesktop/secrets",
          "--method", "org.freedesktop.Secret.Service.SearchItems", "{'service': 'exact'}",
        ])
      #expect(search.stdoutText.contains("'\(collectionPath)\(item.path)'"), "\(search.stdoutText) \(collectionPath)")
    }
  }

  @Test(arguments: Provider.all)
  func aBackupIsLabelledAndCarriesTheTimeInItsBackupAttribute(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("backup", "a", "not json")
      @Shared(.secret(service: "backup", account: "a")) var value: Int = 0
      #expect($value.loadError != nil)
      $value.withLock { $0 = 1 }
      try await $value.save()
      let items = try secretToolItems(instance, service: "backup")
      let backup = try #require(items.first { $0.attributes["backup"] != nil }, "\(items)")
      let stamp = try #require(backup.attributes["backup"])
      #expect(backup.attributes == ["service": "backup", "account": "a", "backup": stamp])
      #expect(stamp.wholeMatch(of: /\d{8}T\d{6}(\.\d+)?Z/) != nil, "\(stamp) is not a UTC time")
      #expect(backup.label == "Backup of undecodable backup (a), \(stamp)")
      #expect(backup.secret == "not json")
    }
  }

  @Test(arguments: Provider.all)
  func aLockedCollectionIsALoadErrorAndNotAnAbsentValue(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("locked", "a", "5")
      let client = instance.client()
      try await client.lock(.default)
      @Shared(.secret(service: "locked", account: "a")) var value: Int = 0
      #expect(value == 0)
      let path = try await client.path(of: .default)
      #expect($value.loadError as? SecretError == .locked(path: path))
    }
  }

  /// libsecret answers a write into a locked collection by asking the provider to unlock it:
  /// secretd unlocks without asking anyone, gnome-keyring needs a prompt that no one can answer
  /// here, so the write fails and says so.
  @Test(arguments: Provider.all)
  func aWriteIntoALockedCollectionIsMadeOnlyIfTheProviderUnlocksIt(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "locked-write", account: "a")) var value: Int = 0
      try await instance.client().lock(.default)
      $value.withLock { $0 = 9 }
      if provider == .secretd {
        try await $value.save()
        #expect(try instance.lookup("locked-write", "a") == "9")
      } else {
        await #expect(throws: SecretError.self) { try await $value.save() }
        let error = $value.saveError as? SecretError
        #expect(error.map { if case .locked = $0 { true } else { false } } == true, "\(String(describing: error))")
        #expect(value == 9, "the value is never rolled back")
      }
    }
  }
}

/// An item as `secret-tool search --all` prints it.
struct PrintedItem: CustomStringConvertible {
  var path = ""
  var label = ""
  var secret = ""
  var attributes: [String: String] = [:]
  var description: String { "\(path) \(label) \(attributes)" }
}

/// Every item with `service`, as `secret-tool search --all --unlock` sees it; `xdg:schema`
/// (which gnome-keyring adds on its own) left out.
func secretToolItems(_ instance: ProviderInstance, service: String) throws -> [PrintedItem] {
  // secret-tool prints attributes on stderr and the rest on stdout: both go to one file, stdout
  // line-buffered, so each attribute line follows its item's header.
  let output = try instance.run(
    "sh", ["-c", #"stdbuf -oL secret-tool search --all --unlock service "$1" 2>&1"#, "sh", service])
  var items: [PrintedItem] = []
  for line in output.stdoutText.split(separator: "\n") {
    if line.hasPrefix("["), line.hasSuffix("]") {
      items.append(PrintedItem(path: String(line.dropFirst().dropLast())))
      continue
    }
    guard let equals = line.firstRange(of: " = "), !items.isEmpty else { continue }
    let (name, value) = (String(line[..<equals.lowerBound]), String(line[equals.upperBound...]))
    switch name {
    case "label": items[items.count - 1].label = value
    case "secret": items[items.count - 1].secret = value
    case let attribute where attribute.hasPrefix("attribute.") && attribute != "attribute.xdg:schema":
      items[items.count - 1].attributes[String(attribute.dropFirst("attribute.".count))] = value
    default: break
    }
  }
  return items
}
