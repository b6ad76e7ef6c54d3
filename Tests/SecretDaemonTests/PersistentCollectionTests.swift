// secretd --persistent on a private bus: the collection `login` (the default) sealed in the data
// folder, locked after a stop until `secretctl unlock`, wiped from memory by Lock; `session`
// never on disk.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("the persistent collection")
struct PersistentCollectionTests {
  static let arguments = ["--persistent"]
  static let login = "/org/freedesktop/secrets/collection/login"

  @Test("an item stored through secret-tool is locked after a stop and back byte for byte with the right passphrase")
  func survivesAStop() async throws {
    try await withProvider(.secretd, arguments: Self.arguments) { (instance) async throws in
      #expect(try Self.unlock(instance, "correct horse").status == 0)
      let value = "pässwörd ✓\nsecond line\n"
      let stored = try instance.secretTool(["store", "--label=kept", "service", "ps", "account", "a"], input: value)
      #expect(stored.status == 0, "\(stored.stderrText)")

      instance.stopProvider()
      try instance.startProvider()

      #expect(try Self.isLocked(instance))
      let locked = try instance.secretTool(["lookup", "service", "ps", "account", "a"])
      #expect(locked.status != 0 && locked.stdout.isEmpty)
      let unlocked = try Self.unlock(instance, "correct horse")
      #expect(unlocked.status == 0, "\(unlocked.stderrText)")
      #expect(try !Self.isLocked(instance))
      #expect(try instance.secretTool(["lookup", "service", "ps", "account", "a"]).stdout == Array(value.utf8))
    }
  }

  @Test("a wrong passphrase is refused with a clear error, leaves login locked and the files untouched")
  func wrongPassphraseChangesNothing() async throws {
    try await withProvider(.secretd, arguments: Self.arguments) { (instance) async throws in
      #expect(try Self.unlock(instance, "right one").status == 0)
      _ = try instance.secretTool(["store", "--label=kept", "service", "wp", "account", "a"], input: "value")
      instance.stopProvider()
      try instance.startProvider()
      let before = try Self.dataFiles(instance)
      #expect(before.count == 2)

      let wrong = try Self.unlock(instance, "wrong one")
      #expect(wrong.status != 0)
      #expect(wrong.stderrText.contains("wrong passphrase"), "\(wrong.stderrText)")
      #expect(try Self.isLocked(instance))
      #expect(try instance.secretTool(["lookup", "service", "wp", "account", "a"]).status != 0)
      #expect(try Self.dataFiles(instance) == before)

      #expect(try Self.unlock(instance, "right one").status == 0)
      #expect(try instance.secretTool(["lookup", "service", "wp", "account", "a"]).stdoutText == "value")
    }
  }

  @Test(
    "the Secret Service's Unlock of a sealed login answers with a prompt and unlocks nothing; a client past its prompts is told to run secretctl unlock"
  )
  func unlockWithoutPassphrasePromptsThenSaysHow() async throws {
    try await withProvider(.secretd, arguments: Self.arguments) { (instance) async throws in
      let client = try RawClient(address: instance.busAddress)
      let unlock = DBusValue.tuple([.objectPaths([Self.login])])
      for _ in 0..<UnlockPrompts.perClient {
        let reply = try client.call(ObjectPaths.root, Interfaces.service, "Unlock", unlock)
        #expect(reply.child(0)?.objectPaths == [] && reply.child(1)?.string?.hasPrefix(ObjectPaths.prompts) == true)
      }
      do throws(GLibError) {
        try client.call(ObjectPaths.root, Interfaces.service, "Unlock", unlock)
        Issue.record("a client was given more than \(UnlockPrompts.perClient) prompts at once")
      } catch {
        #expect(error.remoteName == "org.freedesktop.Secret.Error.IsLocked")
        #expect(error.message.contains("secretctl unlock"), "\(error.message)")
      }
      #expect(try Self.isLocked(instance))
    }
  }

  @Test("session items never reach the disk, and no file holds the plaintext of any secret")
  func nothingInClear() async throws {
    try await withProvider(.secretd, arguments: Self.arguments) { (instance) async throws in
      #expect(try Self.unlock(instance, "passphrase").status == 0)
      let (kept, session) = (randomToken(), randomToken())
      #expect(
        try instance.secretTool(["store", "--label=l", "service", "pl", "account", "k"], input: kept).status == 0)
      let stored = try instance.secretTool(
        ["store", "--label=s", "--collection=session", "service", "pl", "account", "s"], input: session)
      #expect(stored.status == 0, "\(stored.stderrText)")
      instance.stopProvider()

      // Only login's item is in the log (opened in a scope of its own: it holds the file's lock).
      do {
        let log = try RecordLog.open(at: Self.dataFolder(instance) + "/login.log")
        #expect(log.live.count == 1)
        #expect(log.live.keys.allSatisfy { $0.collection == "login" })
      }
      // The scan finds a token where it is (positive control), and neither where it is not.
      let control = instance.bus.directory.appending(path: "data/secretd/control")
      try Data(("x" + session + "y").utf8).write(to: control)
      #expect(try Self.filesHolding(session, under: instance.bus.directory).map { $0.hasSuffix("/control") } == [true])
      try FileManager.default.removeItem(at: control)
      for token in [kept, session] {
        #expect(try Self.filesHolding(token, under: instance.bus.directory).isEmpty)
      }

      try instance.startProvider()
      #expect(try Self.unlock(instance, "passphrase").status == 0)
      #expect(try instance.secretTool(["lookup", "service", "pl", "account", "k"]).stdoutText == kept)
      #expect(try instance.secretTool(["lookup", "service", "pl", "account", "s"]).status != 0)
    }
  }

  @Test("Lock makes login's items unreadable and empties it until the next unlock")
  func lockOverTheBus() async throws {
    try await withProvider(.secretd, arguments: Self.arguments) { (instance) async throws in
      #expect(try Self.unlock(instance, "passphrase").status == 0)
      _ = try instance.secretTool(["store", "--label=l", "service", "lk", "account", "a"], input: "locked away")
      let client = try RawClient(address: instance.busAddress)
      #expect(try Self.items(client).count == 1)
      #expect(try instance.run(try builtExecutable("secretctl").path, ["lock"]).status == 0)
      #expect(try Self.isLocked(instance))
      #expect(try Self.items(client).isEmpty)
      #expect(try instance.secretTool(["lookup", "service", "lk", "account", "a"]).status != 0)
      #expect(try Self.unlock(instance, "passphrase").status == 0)
      #expect(try instance.secretTool(["lookup", "service", "lk", "account", "a"]).stdoutText == "locked away")
    }
  }

  @Test("a replace and a delete are durable across a restart")
  func replaceAndDeleteAreDurable() async throws {
    try await withProvider(.secretd, arguments: Self.arguments) { (instance) async throws in
      #expect(try Self.unlock(instance, "passphrase").status == 0)
      _ = try instance.secretTool(["store", "--label=a", "service", "rd", "account", "a"], input: "one")
      _ = try instance.secretTool(["store", "--label=b", "service", "rd", "account", "b"], input: "two")
      #expect(
        try instance.secretTool(["store", "--label=a", "service", "rd", "account", "a"], input: "uno").status == 0)
      #expect(try instance.secretTool(["clear", "service", "rd", "account", "b"]).status == 0)

      instance.stopProvider()
      try instance.startProvider()
      #expect(try Self.unlock(instance, "passphrase").status == 0)

      #expect(try instance.secretTool(["lookup", "service", "rd", "account", "a"]).stdoutText == "uno")
      #expect(try instance.secretTool(["lookup", "service", "rd", "account", "b"]).status != 0)
      let search = try instance.secretTool(["search", "--all", "service", "rd"])
      #expect(search.stdoutText.components(separatedBy: "label = ").count - 1 == 1)
    }
  }

  // MARK: Helpers

  static func unlock(_ instance: ProviderInstance, _ passphrase: String) throws -> ProcessOutput {
    try instance.run(
      try builtExecutable("secretctl").path, ["unlock", "--password-stdin"], input: Array((passphrase + "\n").utf8))
  }

  static func isLocked(_ instance: ProviderInstance) throws -> Bool {
    let client = try RawClient(address: instance.busAddress)
    let reply = try client.call(
      login, Interfaces.properties, "Get", .tuple([.string(Interfaces.collection), .string("Locked")]))
    let locked: Bool? = reply.child(0)?.unboxed?.boolean
    return try #require(locked as Bool?)
  }

  static func items(_ client: RawClient) throws -> [String] {
    let reply = try client.call(
      login, Interfaces.properties, "Get", .tuple([.string(Interfaces.collection), .string("Items")]))
    return reply.child(0)?.unboxed?.objectPaths ?? []
  }

  static func dataFolder(_ instance: ProviderInstance) -> String {
    instance.bus.directory.appending(path: "data/secretd").path
  }

  /// Every file of the data folder, by name, with its bytes.
  static func dataFiles(_ instance: ProviderInstance) throws -> [String: Data] {
    let folder = dataFolder(instance)
    var files: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
      files[name] = try Data(contentsOf: URL(filePath: folder + "/" + name))
    }
    return files
  }

  /// The regular files under `folder` whose bytes contain `token`.
  static func filesHolding(_ token: String, under folder: URL) throws -> [String] {
    let needle = Data(token.utf8)
    var found: [String] = []
    let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
    while let url = walker?.nextObject() as? URL {
      guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
      if let bytes = try? Data(contentsOf: url), bytes.range(of: needle) != nil { found.append(url.path) }
    }
    return found
  }
}
