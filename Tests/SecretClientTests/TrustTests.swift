// The client checks who provides the Secret Service before a secret crosses the bus.
import Foundation
import SecretClient
import SecretTestSupport
import Testing

@Suite("Trust: the provider runs as our user and encrypts, or gets nothing")
struct TrustTests {
  @Test(
    "a provider of another user gets no secret and gives none; the error says who owns the name",
    .enabled(if: getuid() == 0, "running a provider as another user needs root"))
  func aProviderOfAnotherUserIsRefused() async throws {
    let foreign = try ForeignProvider()
    // The other user's provider holds an item, as if answering a `get` with a planted value.
    let planted = try foreign.runAsItsUser(
      "secret-tool", ["store", "--label=planted", "service", "planted", "account", "a"], input: Array("fake".utf8))
    try #require(planted.status == 0, "\(planted.stderrText)")
    let client = SecretClient(bus: .address(foreign.bus.address))

    func expectRefusal(_ call: () async throws -> Void) async {
      await #expect {
        try await call()
      } throws: { error in
        guard case .providerOfAnotherUser(let provider) = error as? SecretError else { return false }
        return provider.uid == ForeignProvider.user && provider.pid == foreign.pid
          && String(describing: error).contains("uid \(ForeignProvider.user)")
      }
    }
    await expectRefusal { try await client.write(SecretValue("s3cret-for-me"), service: "stolen", account: "a") }
    await expectRefusal { _ = try await client.read(service: "planted", account: "a") }
    await expectRefusal { _ = try await client.search(["service": "planted"], includeSecrets: true) }
    // A passphrase that would open secretd's persistent collection is a secret too.
    await expectRefusal { _ = try client.unlockSealed(passphrase: SecretBytes("s3cret")) }
    await expectRefusal { _ = try client.addUnlocker(passphrase: SecretBytes("s3cret")) }
    // Nothing reached it: its own user finds no such item.
    let stolen = try foreign.runAsItsUser("secret-tool", ["search", "--all", "service", "stolen"])
    #expect(stolen.stdout.isEmpty && !stolen.stderrText.contains("s3cret"), "\(stolen.stdoutText)")
    // What is not a secret is still answered, and says who it is.
    let provider = try await client.provider()
    #expect(provider.uid == ForeignProvider.user && !provider.runsAsCurrentUser)
  }

  @Test(arguments: Provider.all)
  func aProviderOfOurOwnUserIsTrusted(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let info = try await instance.client().provider()
      #expect(info.uid == UInt32(geteuid()) && info.runsAsCurrentUser)
      try await instance.client().write(SecretValue("mine"), service: "own", account: "a")
      #expect(try await instance.client().read(service: "own", account: "a")?.text == "mine")
    }
  }

  @Test("a provider that answers NotSupported to DH gets no secret unless plain transfer is allowed")
  func aPlainOnlyProviderIsRefusedUnlessAllowed() async throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let provider = try PlainOnlyProvider(bus: bus)
    defer { provider.stop() }
    let client = SecretClient(bus: .address(bus.address))
    await #expect(throws: SecretError.plainTransferRefused(busName: "org.freedesktop.secrets")) {
      try await client.write(SecretValue("s3cret"), service: "plain", account: "a")
    }
    let allowed = SecretClient(bus: .address(bus.address), allowsPlainTransfer: true)
    #expect(try await allowed.search(["service": "plain"]).isEmpty, "the refused write sent nothing")
    // Positive control: allowed explicitly, the same provider stores and gives back.
    try await allowed.write(SecretValue("s3cret"), service: "plain", account: "a")
    #expect(try await allowed.read(service: "plain", account: "a")?.text == "s3cret")
    await #expect(throws: SecretError.plainTransferRefused(busName: "org.freedesktop.secrets")) {
      _ = try await client.read(service: "plain", account: "a")
    }
  }
}
