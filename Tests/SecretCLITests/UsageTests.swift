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
      let help = try run([spec.name, "--help"])
      #expect(help.status == 0)
      #expect(help.stdoutText.hasPrefix(spec.summary))
      #expect(help.stdoutText.contains("Usage: secretctl \(spec.name)"))
      #expect(try run(["help", spec.name]).stdoutText == help.stdoutText)
    }
    let top = try run(["--help"])
    #expect(top.status == 0 && top.stdoutText.contains("git-credential"))
  }

  @Test func versionIsPrinted() throws {
    let version = try run(["--version"])
    #expect(version.status == 0)
    #expect(version.stdoutText == "secretctl \(secretctlVersion)\n")
  }

  @Test(arguments: [
    [], ["frobnicate"], ["--frobnicate"], ["get"], ["get", "a", "b", "c"], ["set", "--ttl"], ["completion", "tcsh"],
    ["search", "--json=1"],
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

  @Test func bashCompletionIsValidAndComesFromTheTable() throws {
    let script = try run(["completion", "bash"])
    #expect(script.status == 0)
    for spec in commandTable { #expect(script.stdoutText.contains(spec.name)) }
    #expect(script.stdoutText.contains("--show-secrets"))
    // Load it into bash and ask it to complete, as a user's shell would.
    let file = FileManager.default.temporaryDirectory.appending(path: "secretctl-completion-\(UUID().uuidString).bash")
    defer { try? FileManager.default.removeItem(at: file) }
    try Data(script.stdout).write(to: file)
    let probe = """
      source '\(file.path)'
      COMP_WORDS=(secretctl gi); COMP_CWORD=1; _secretctl; echo "${COMPREPLY[*]}"
      COMP_WORDS=(secretctl search --sh); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
      COMP_WORDS=(secretctl set --collection se); COMP_CWORD=3; _secretctl; echo "${COMPREPLY[*]}"
      COMP_WORDS=(secretctl completion f); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
      """
    let bash = try runProcess(
      "/bin/bash", ["-c", probe], environment: ["PATH": "/usr/bin:/bin"], in: URL(filePath: "/tmp"))
    #expect(bash.stdoutText == "git-credential\n--show-secrets\nsession\nfish\n", "\(bash.stderrText)")
  }

  @Test func zshAndFishScriptsNameEveryCommandAndOption() throws {
    for shell in ["zsh", "fish"] {
      let script = try run(["completion", shell])
      #expect(script.status == 0)
      for spec in commandTable {
        #expect(script.stdoutText.contains(spec.name))
        for option in spec.options { #expect(script.stdoutText.contains(option.long), "\(shell): \(option.long)") }
      }
    }
    #expect(try run(["completion", "zsh"]).stdoutText.hasPrefix("#compdef secretctl"))
  }
}
