import Foundation
import SecretTestSupport
import Testing

@Suite("secretctl trusts only a provider of its own user, and only encrypted transfer unless told")
struct TrustTests {
  @Test(
    "set and get refuse a provider of another user and name it, sending and taking no secret",
    .enabled(if: getuid() == 0, "running a provider as another user needs root"))
  func aProviderOfAnotherUserIsRefused() throws {
    let foreign = try ForeignProvider()
    _ = try foreign.runAsItsUser(
      "secret-tool", ["store", "--label=planted", "service", "planted", "account", "a"], input: Array("fake".utf8))
    // secretctl's bus: the private bus the harness started for the foreign provider.
    let environment = ["DBUS_SESSION_BUS_ADDRESS": foreign.bus.address, "PATH": "/usr/bin:/bin", "HOME": "/tmp"]
    func run(_ arguments: [String], input: String? = nil) throws -> ProcessOutput {
      try runProcess(
        try secretctlPath(), arguments, input: input.map { Array($0.utf8) }, environment: environment,
        in: foreign.bus.directory)
    }
    for result in [
      try run(["set", "stolen", "a"], input: "s3cret-for-me"), try run(["get", "planted", "a"]),
      try run(["git-credential", "store"], input: "protocol=https\nhost=x.example\nusername=u\npassword=s3cret\n\n"),
    ] {
      #expect(result.status == 3 && result.stdout.isEmpty, "\(result.stdoutText)")
      #expect(result.stderrIsOneMessage)
      #expect(
        result.stderrText.contains("owned by :") && result.stderrText.contains("pid \(foreign.pid)")
          && result.stderrText.contains("runs as uid \(ForeignProvider.user), not as you"), "\(result.stderrText)")
    }
    let stolen = try foreign.runAsItsUser("secret-tool", ["search", "--all", "service", "stolen"])
    #expect(stolen.stdout.isEmpty)
    #expect(try foreign.runAsItsUser("secret-tool", ["search", "--all", "server", "x.example"]).stdout.isEmpty)
  }

  @Test("a provider that cannot do DH is refused unless --allow-plain-transfer says it is meant")
  func aPlainOnlyProviderNeedsTheExplicitOption() throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let provider = try PlainOnlyProvider(bus: bus)
    defer { provider.stop() }
    // secretctl's bus: the private bus this test started.
    let environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin", "HOME": "/tmp"]
    func run(_ arguments: [String], input: String? = nil) throws -> ProcessOutput {
      try runProcess(
        try secretctlPath(), arguments, input: input.map { Array($0.utf8) }, environment: environment,
        in: bus.directory)
    }
    let refused = try run(["set", "plain", "a"], input: "s3cret")
    #expect(refused.status == 3 && refused.stderrIsOneMessage)
    #expect(refused.stderrText.contains("only plain transfer") && refused.stderrText.contains("--allow-plain-transfer"))
    #expect(try run(["--allow-plain-transfer", "get", "plain", "a"]).status == 1, "nothing was sent")
    #expect(try run(["--allow-plain-transfer", "set", "plain", "a"], input: "s3cret").status == 0)
    #expect(try run(["--allow-plain-transfer", "get", "plain", "a"]).stdoutText == "s3cret")
    #expect(try run(["get", "plain", "a"]).status == 3, "without the option it is refused for reading too")
  }
}
