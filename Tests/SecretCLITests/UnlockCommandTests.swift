// `secretctl unlock` against secretd --persistent: the passphrase asked on the terminal with echo
// off (twice when it is being set), or read from stdin.
import SecretTestSupport
import Testing

@Suite("unlock: secretd's persistent collection")
struct UnlockCommandTests {
  @Test("on a terminal the first unlock asks twice without echo, and a later one asks once")
  func asksOnTheTerminal() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      let first = try PseudoTerminalChild(try secretctlPath(), ["unlock"], environment: instance.environment)
      try first.waitFor("New passphrase")
      first.type("typed secretly\n")
      try first.waitFor("Again")
      first.type("typed secretly\n")
      #expect(first.wait() == 0, "\(first.output)")
      #expect(!first.output.contains("typed secretly"), "the passphrase was echoed: \(first.output)")
      #expect(try secretctl(instance, ["set", "tty", "a"], input: "value").status == 0)
      #expect(try secretctl(instance, ["lock"]).status == 0)
      #expect(try secretctl(instance, ["get", "tty", "a"]).status != 0)

      let again = try PseudoTerminalChild(try secretctlPath(), ["unlock"], environment: instance.environment)
      try again.waitFor("Passphrase for")
      again.type("typed secretly\n")
      #expect(again.wait() == 0, "\(again.output)")
      #expect(try secretctl(instance, ["get", "tty", "a"]).stdoutText == "value")
    }
  }

  @Test("two different entries set no passphrase")
  func differingEntriesSetNothing() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      let first = try PseudoTerminalChild(try secretctlPath(), ["unlock"], environment: instance.environment)
      try first.waitFor("New passphrase")
      first.type("one\n")
      try first.waitFor("Again")
      first.type("two\n")
      #expect(first.wait() == 2, "\(first.output)")
      #expect(first.output.contains("differ"), "\(first.output)")
      // Still unset: the next unlock sets whatever it is given.
      #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "three").status == 0)
      #expect(try secretctl(instance, ["lock"]).status == 0)
      #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "one").status != 0)
      #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "three").status == 0)
    }
  }
}
