import SecretTestSupport
import Testing

@Suite("The terminal: a no-echo prompt for set, a newline for get")
struct TerminalTests {
  @Test(arguments: Provider.all)
  func setAsksTwiceWithoutEchoingTheSecret(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let child = try PseudoTerminalChild(
        try secretctlPath(), ["set", "tty", "alice"], environment: instance.environment)
      try child.waitFor("Secret for service \"tty\", account \"alice\": ")
      child.type("typed-secret\n")
      try child.waitFor("Again: ")
      child.type("typed-secret\n")
      #expect(child.wait() == 0)
      #expect(!child.output.contains("typed-secret"), "the secret was echoed: \(child.output.debugDescription)")

      let get = try PseudoTerminalChild(
        try secretctlPath(), ["get", "tty", "alice"], environment: instance.environment)
      #expect(get.wait() == 0)
      #expect(get.output == "typed-secret\r\n", "a newline follows on a terminal")
      #expect(try secretctl(instance, ["get", "tty", "alice"]).stdoutText == "typed-secret")
    }
  }

  @Test(arguments: Provider.all)
  func twoDifferentEntriesStoreNothing(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let child = try PseudoTerminalChild(
        try secretctlPath(), ["set", "tty", "bob"], environment: instance.environment)
      try child.waitFor(": ")
      child.type("first\n")
      try child.waitFor("Again: ")
      child.type("second\n")
      #expect(child.wait() == 2)
      #expect(child.output.contains("secretctl: the two entries differ; nothing was stored"))
      #expect(try secretctl(instance, ["get", "tty", "bob"]).status == 1)
    }
  }

  @Test(arguments: Provider.all)
  func setUnderScriptReadsBothEntriesFromTheTerminal(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      // script(1) from bsdutils gives the command a terminal and types its own stdin into it.
      let command = "'\(try secretctlPath())' set scripted alice"
      let run = try instance.run(
        "script", ["-q", "-e", "-c", command, "/dev/null"], input: Array("pa ss\npa ss\n".utf8))
      #expect(run.status == 0, "\(run.stdoutText)")
      #expect(run.stdoutText.contains("Again: "))
      #expect(try secretctl(instance, ["get", "scripted", "alice"]).stdoutText == "pa ss")
    }
  }
}
