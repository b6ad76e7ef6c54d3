// No client can make secretd give up its name, and with it every secret clients store; losing
// the name or the bus is an error exit that says what was lost.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("the name and the bus")
struct NameOwnershipTests {
  /// DBUS_NAME_FLAG_REPLACE_EXISTING | DBUS_NAME_FLAG_DO_NOT_QUEUE, and the answer "EXISTS".
  static let replaceExisting: UInt32 = 2 | 4
  static let exists: UInt32 = 3

  @Test(
    "a client's RequestName(REPLACE_EXISTING) gets EXISTS; the provider keeps the name and its items",
    arguments: Provider.all)
  func aClientCannotTakeTheName(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      #expect(
        try instance.secretTool(["store", "--label=kept", "service", "name", "account", "a"], input: "still here")
          .status == 0)
      let thief = try BusConnection(address: instance.busAddress)
      let answer = try thief.callBus(
        "RequestName", .tuple([.string("org.freedesktop.secrets"), .uint32(Self.replaceExisting)]), replyType: "(u)")
      #expect(answer.child(0)?.uint32 == Self.exists)
      #expect(thief.ownerPID(of: "org.freedesktop.secrets")?.rawValue == instance.pid)
      #expect(isRunning(instance.pid))
      #expect(try instance.secretTool(["lookup", "service", "name", "account", "a"]).stdoutText == "still here")
    }
  }

  @Test("secretd --replace cannot take the name from a secretd that does not allow it")
  func replaceNeedsConsent() async throws {
    try await withProvider(.secretd) { instance in
      let taker = try runProcess(
        secretdPath(), ["--address", instance.busAddress, "--replace"],
        environment: environmentWithoutBus,
        in: URL(filePath: "/tmp"))
      #expect(taker.status == 1)
      #expect(taker.stderrText.contains("already owned by secretd (pid \(instance.pid))"), "\(taker.stderrText)")
      #expect(isRunning(instance.pid))
    }
  }

  @Test("with --allow-replacement, --replace takes over and the old secretd exits 1 saying how many items were lost")
  func consentedReplacement() async throws {
    try await withProvider(.secretd) { instance in
      let name = "org.example.secretd.replaceable"
      let old = try startSecretd(on: instance, busName: name, ["--allow-replacement"])
      let client = try RawClient(address: instance.busAddress, destination: name)
      let session = try client.openPlainSession()
      try client.createPlainItem(session: session, attributes: ["n": "1"], secret: [1])
      try client.createPlainItem(session: session, attributes: ["n": "2"], secret: [2])
      let new = try startSecretd(on: instance, busName: name, ["--replace"])
      defer { new.stop() }
      #expect(old.process.wait() == 1, "\(old.stderrText)")
      #expect(
        old.stderrText.contains("another connection took \(name); stopping, 2 items dropped from memory"),
        "\(old.stderrText)")
      #expect(client.connection.ownerPID(of: name)?.rawValue == new.process.pid)
    }
  }

  @Test(
    "when the bus ends secretd says so, not as an error, with how many items it drops, and exits 1 for a restart")
  func busLoss() async throws {
    let daemon = try StandaloneSecretd()
    #expect(try daemon.run("secret-tool", ["store", "--label=x", "k", "v"], input: "x").status == 0)
    daemon.bus.stop()
    #expect(daemon.process.wait() == 1)
    #expect(daemon.logText.contains("secretd: the bus closed ("), "\(daemon.logText)")
    #expect(daemon.logText.contains("stopped, 1 item dropped from memory"), "\(daemon.logText)")
    #expect(!daemon.logText.contains("error"), "\(daemon.logText)")
  }
}
