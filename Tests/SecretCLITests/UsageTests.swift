import Foundation
import SecretTestSupport
import Testing

@testable import SecretCLI

@Suite("Help, version, usage errors, completion through the binary")
struct UsageTests {
  func run(_ arguments: [String]) throws -> ProcessOutput {
    try runProcess(try secretctlPath(), arguments, environment: ["PATH": "/usr/bin:/bin"], in: URL(filePath: "/tmp"))
  }

  @Test func everyCommandHasHelp() throws {
    for spec in commandTable {
      let help = try run(spec.words + ["--help"])
      #expect(help.status == 0)
      #expect(help.stdoutText.hasPrefix(spec.summary))
      #expect(help.stdoutText.contains("Usage: secretctl \(spec.name)"))
      #expect(try run(["help"] + spec.words).stdoutText == help.stdoutText)
    }
    let top = try run(["--help"])
    #expect(top.status == 0 && top.stdoutText.contains("git-credential"))
    #expect(top.stdoutText.contains("--allow-plain-transfer"))
    let group = try run(["credential", "--help"])
    #expect(group.status == 0)
    for spec in commandTable where spec.words.first == "credential" {
      #expect(group.stdoutText.contains(spec.summary.prefix(30)), "\(spec.name)")
    }
    #expect(try run(["help", "credential"]).stdoutText == group.stdoutText)
  }

  @Test(arguments: [
    (["gte", "svc"], "did you mean `get`?"), (["serach"], "did you mean `search`?"),
    (["credential", "lsit"], "did you mean `secretctl credential list`?"),
    (["search", "--jsn"], "did you mean --json?"), (["set", "--tll", "1h", "s"], "did you mean --ttl?"),
  ])
  func aMistypedCommandOrOptionIsAnsweredWithTheNearestOne(arguments: [String], suggestion: String) throws {
    let result = try run(arguments)
    #expect(result.status == 2)
    #expect(result.stderrIsOneMessage)
    #expect(result.stderrText.contains(suggestion), "\(result.stderrText)")
    // Positive control: a word far from every command gets no suggestion.
    #expect(try run(["frobnicate"]).stderrText.contains("did you mean") == false)
  }

  @Test func versionIsPrinted() throws {
    let version = try run(["--version"])
    #expect(version.status == 0)
    #expect(version.stdoutText == "secretctl \(secretctlVersion)\n")
  }

  @Test(arguments: [
    [], ["frobnicate"], ["--frobnicate"], ["get"], ["get", "a", "b", "c"], ["set", "--ttl"], ["completion", "tcsh"],
    ["search", "--json=1"], ["credential"], ["credential", "frob"], ["credential", "set"],
    ["credential", "set", "a/b"], ["credential", "set", "--unit", "nodot", "id"], ["credential", "drop-in", "app"],
    ["completion", "--words", "secrets"],
  ])
  func usageErrorsExitTwoWithOneLine(arguments: [String]) throws {
    let result = try run(arguments)
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderrIsOneMessage)
    #expect(result.stderrText.contains("--help`"))
  }

  @Test func aSecretIsNeverAcceptedOnTheCommandLine() throws {
    let result = try run(["set", "s", "a", "hunter2"])
    #expect(result.status == 2)
    #expect(!result.stderrText.contains("hunter2"), "\(result.stderrText)")
    #expect(result.stderrText.contains("too many arguments"))
  }
}
