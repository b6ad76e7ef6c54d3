import Foundation
import SecretTestSupport
import Testing

@Suite("exec through the binary")
struct ExecCommandTests {
  @Test(arguments: Provider.all)
  func theCommandSeesTheSecretsAndItsStatusComesBack(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "api", "alice"], input: "tok en\n")
      _ = try secretctl(instance, ["set", "db"], input: "pw")
      let run = try secretctl(
        instance, ["exec", "-e", "TOKEN=api/alice", "--env=DB=db", "/bin/sh", "-c", "printf %s \"$TOKEN|$DB\"; exit 7"])
      #expect(run.status == 7)
      #expect(run.stdoutText == "tok en\n|pw")
      #expect(run.stderr.isEmpty)
      let dashed = try secretctl(instance, ["exec", "-e", "T=db", "--", "/bin/sh", "-c", "printf %s \"$T\""])
      #expect(dashed.status == 0 && dashed.stdoutText == "pw")
    }
  }

  @Test(arguments: Provider.all)
  func secretctlReplacesItselfSoNoParentKeepsTheSecrets(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "api", "alice"], input: "x")
      // exec keeps the process id: the shell runs as the very process that was started as secretctl,
      // and its parent is the test itself, so no secretctl process is left holding the secrets.
      let run = try secretctl(
        instance, ["exec", "-e", "T=api/alice", "/bin/sh", "-c", "printf '%s %s' $$ \"$(cat /proc/$PPID/comm)\""])
      #expect(run.status == 0)
      #expect(run.stdoutText == "\(run.pid) \(try ownCommandName())")
    }
  }

  @Test(arguments: Provider.all)
  func aMissingSecretRunsNothing(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "api", "alice"], input: "x")
      let marker = instance.bus.directory.appending(path: "ran").path
      let run = try secretctl(
        instance, ["exec", "-e", "A=api/alice", "-e", "B=api/nobody", "/bin/sh", "-c", "touch '\(marker)'"])
      #expect(run.status == 1)
      #expect(run.stderrIsOneMessage)
      #expect(run.stderrText.contains("B"))
      #expect(!FileManager.default.fileExists(atPath: marker))
    }
  }

  @Test(arguments: Provider.all)
  func execFailuresExitLikeEnv(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "api", "alice"], input: "x")
      let missing = try secretctl(instance, ["exec", "-e", "A=api/alice", "no-such-command-anywhere"])
      #expect(missing.status == 127)
      #expect(missing.stderrIsOneMessage)
      let plainFile = instance.bus.directory.appending(path: "not-a-program")
      try Data("echo no".utf8).write(to: plainFile)
      let notExecutable = try secretctl(instance, ["exec", "-e", "A=api/alice", plainFile.path])
      #expect(notExecutable.status == 126)
      #expect(try secretctl(instance, ["exec", "/bin/true"]).status == 2, "no -e")
      #expect(try secretctl(instance, ["exec", "-e", "A=api/alice"]).status == 2, "no command")
      #expect(try secretctl(instance, ["exec", "-e", "nonsense", "/bin/true"]).status == 2)
      #expect(try secretctl(instance, ["exec", "--help"]).stdoutText.contains("127"))
    }
  }
}

/// The name the kernel shows for this test process, as its children's `/proc/$PPID/comm` reads.
private func ownCommandName() throws -> String {
  try String(contentsOfFile: "/proc/self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
}
