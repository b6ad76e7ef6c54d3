// What a Secret Service provider's death takes with it, side by side: the README's table of what
// survives is these tests' claims (and, under a real user manager, scripts/check-store-in-container's). gnome-keyring's session collection is the memory-only
// peer of secretd's store; its login collection is on disk.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("what a provider's death takes")
struct ProviderDeathTests {
  /// Stores `secret` as `test=name` in `collection` with secret-tool.
  static func store(_ secret: String, as name: String, in collection: String, on instance: ProviderInstance) throws {
    let stored = try instance.run(
      "secret-tool", ["store", "--label=\(name)", "--collection=\(collection)", "test", name], input: Array(secret.utf8)
    )
    #expect(stored.status == 0, "\(stored.stderrText)")
  }

  static func lookup(_ name: String, on instance: ProviderInstance) throws -> String? {
    let found = try instance.run("secret-tool", ["lookup", "test", name])
    return found.status == 0 ? found.stdoutText : nil
  }

  /// SIGKILL, as a crash or an OOM kill ends it (SIGTERM: a stop or a restart), then a new process.
  static func killAndRestart(_ instance: ProviderInstance, with signal: Int32 = SIGKILL) throws {
    kill(instance.pid, signal)
    instance.stopProvider()
    try instance.startProvider()
  }

  @Test(
    "gnome-keyring killed (a crash) or stopped (a restart, an upgrade) and started again has lost every item of its session collection (memory) and kept those of its login collection (disk)",
    arguments: [SIGKILL, SIGTERM])
  func gnomeKeyringLosesItsSessionCollection(signal: Int32) async throws {
    try await withProvider(.gnomeKeyring) { instance in
      try Self.store("in memory", as: "session-item", in: "session", on: instance)
      try Self.store("on disk", as: "login-item", in: "default", on: instance)
      #expect(try Self.lookup("session-item", on: instance) == "in memory")
      #expect(try Self.lookup("login-item", on: instance) == "on disk")
      try Self.killAndRestart(instance, with: signal)
      #expect(try Self.lookup("session-item", on: instance) == nil)
      #expect(try Self.lookup("login-item", on: instance) == "on disk")
    }
  }

  @Test(
    "secretd killed with no service manager to keep its store (make run, D-Bus activation) starts empty; handed its store back, as systemd's fd store does, it serves every item again"
  )
  func secretdKeepsItsStoreOnlyWithAServiceManager() async throws {
    let manager = try NotifySocket(in: try makeTemporaryDirectory())
    try await withProvider(.secretd, providerEnvironment: ["NOTIFY_SOCKET": manager.path]) { instance in
      try Self.store("kept", as: "item", in: "default", on: instance)
      try Self.store("kept too", as: "session-item", in: "session", on: instance)
      let handed = try #require(manager.stored(StoreKeeper.storeName), "secretd handed no store to the manager")
      let kept = dup(handed)
      defer { close(kept) }
      try Self.killAndRestart(instance)
      #expect(try Self.lookup("item", on: instance) == nil)
      #expect(try Self.lookup("session-item", on: instance) == nil)
      kill(instance.pid, SIGKILL)
      instance.stopProvider()
      let secretd = KeptSecretd(on: instance, busName: "org.freedesktop.secrets", arena: kept)
      try secretd.start()
      defer { secretd.stop() }
      #expect(try Self.lookup("item", on: instance) == "kept")
      #expect(try Self.lookup("session-item", on: instance) == "kept too")
    }
  }
}
