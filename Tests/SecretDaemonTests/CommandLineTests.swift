// secretd as a program: help, version, SIGTERM, limit flags.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("command line")
struct CommandLineTests {
  func run(_ arguments: [String]) throws -> ProcessOutput {
    try runProcess(
      secretdPath(), arguments, environment: ProcessInfo.processInfo.environment, in: URL(filePath: "/tmp"))
  }

  @Test("--help, --version and a bad flag")
  func helpAndVersion() throws {
    let help = try run(["--help"])
    #expect(help.status == 0)
    for limit in Limit.allCases { #expect(help.stdoutText.contains(limit.flag), "\(limit.flag) missing from --help") }
    #expect(help.stdoutText.contains("--replace") && help.stdoutText.contains("--allow-replacement"))
    #expect(try run(["--version"]).stdoutText.hasPrefix("secretd "))
    let bad = try run(["--frobnicate"])
    #expect(bad.status == 2)
    #expect(bad.stderrText.contains("unknown option"))
  }

  @Test("SIGTERM exits cleanly with a log line")
  func sigterm() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let extra = try startSecretd(on: instance, busName: "org.example.secretd.term", [])
      #expect(extra.stop() == 0)
      let text = extra.stderrText
      #expect(text.contains("SIGTERM received"))
      #expect(text.split(separator: "\n").allSatisfy { $0.hasPrefix("secretd: ") })
    }
  }

  @Test("limit flags: --max-items answered with an error naming it")
  func limitFlags() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let name = "org.example.secretd.limited"
      let limited = try startSecretd(on: instance, busName: name, ["--max-items", "2"])
      let client = try RawClient(address: instance.busAddress, destination: name)
      let session = try client.openPlainSession()
      try client.createPlainItem(session: session, attributes: ["n": "1"], secret: [1])
      try client.createPlainItem(session: session, attributes: ["n": "2"], secret: [2])
      do throws(GLibError) {
        try client.createPlainItem(session: session, attributes: ["n": "3"], secret: [3])
        Issue.record("a third item was accepted")
      } catch {
        // Everything that tells a refusal from a timeout or a daemon that died.
        let context =
          "\(error.domain) \(error.code) \(error.remoteName ?? "no remote name"): \(error.message); daemon running: \(limited.process.isRunning); its log: \(limited.stderrText)"
        #expect(error.remoteName == "org.freedesktop.DBus.Error.LimitsExceeded", "\(context)")
        #expect(error.message.contains("--max-items"), "\(context)")
      }
      #expect(limited.stop() == 0, "\(limited.stderrText)")
    }
  }
}
