// An unlocked `login` stays unlocked through a crash: its data key is kept by the service manager
// beside the store (`login-key`), and let go when `login` is locked. Here the test holds both,
// as systemd's file descriptor store does.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("the persistent collection's key kept through a crash")
struct KeptKeyTests {
  @Test(
    "after a SIGKILL, secretd handed back the kept key serves login unlocked with its items; one handed no key starts it locked; Lock lets the key go"
  )
  func loginStaysUnlockedThroughACrash() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try SurvivalTests.keptArena()
      let manager = try NotifySocket(in: instance.bus.directory)
      let arguments = ["--persistent", "--data-folder", instance.bus.directory.appending(path: "data").path]
      let first = KeptSecretd(
        on: instance, busName: "org.example.kept", arena: arena.arena.memory.file.rawValue, arguments: arguments)
      first.notifySocket.withLock { $0 = manager.path }
      try first.start()
      var client = try RawClient(address: instance.busAddress, destination: first.busName)
      try client.call(
        ObjectPaths.root, Interfaces.secretd, "UnlockWithPassphrase", .tuple([.bytes(Array("passphrase".utf8))]))
      try client.createPlainItem(
        session: try client.openPlainSession(), attributes: ["kept": "yes"], secret: Array("through it".utf8))
      try await eventually("secretd to hand the key over") { manager.stored(SealedCollection.keptKeyName) != nil }
      first.kill()
      let key = try #require(manager.stored(SealedCollection.keptKeyName))

      // Positive control: handed the store alone, login comes back locked.
      let locked = KeptSecretd(
        on: instance, busName: "org.example.locked", arena: arena.arena.memory.file.rawValue, arguments: arguments)
      try locked.start()
      client = try RawClient(address: instance.busAddress, destination: locked.busName)
      #expect(try Self.isLoginLocked(client))
      locked.kill()

      let second = KeptSecretd(
        on: instance, busName: "org.example.kept2", arena: arena.arena.memory.file.rawValue, arguments: arguments,
        alsoHanded: [(SealedCollection.keptKeyName, key)])
      second.notifySocket.withLock { $0 = manager.path }
      try second.start()
      defer { second.stop() }
      #expect(second.logText.contains("still unlocked after the restart"), "\(second.logText)")
      client = try RawClient(address: instance.busAddress, destination: second.busName)
      #expect(try !Self.isLoginLocked(client))
      let item = try #require(try client.search(["kept": "yes"]).first)
      #expect(try client.plainSecret(item, session: try client.openPlainSession()) == Array("through it".utf8))
      try client.call(ObjectPaths.root, Interfaces.service, "Lock", .tuple([.objectPaths([Self.login])]))
      try await eventually("secretd to let the key go") { manager.stored(SealedCollection.keptKeyName) == nil }
    }
  }

  static let login = ObjectPaths.collection(SealedCollection.name)

  static func isLoginLocked(_ client: RawClient) throws -> Bool {
    let reply = try client.call(
      login, Interfaces.properties, "Get", .tuple([.string(Interfaces.collection), .string("Locked")]))
    let locked: Bool? = reply.child(0)?.unboxed?.boolean
    return try #require(locked as Bool?)
  }
}
