import Foundation
import SecretClient
import SecretTestSupport
import Testing

@testable import SecretCLI

@Suite("Completion, loaded by bash, zsh and fish themselves")
struct CompletionTests {
  /// The script for `shell`, saved in a folder of its own under the name the shell looks for.
  func script(_ shell: String, in folder: URL) throws -> URL {
    let output = try runProcess(
      try secretctlPath(), ["completion", shell], environment: ["PATH": "/usr/bin:/bin"], in: folder)
    #expect(output.status == 0)
    let name = ["bash": "secretctl.bash", "zsh": "_secretctl", "fish": "secretctl.fish"][shell] ?? shell
    let file = folder.appending(path: name)
    try Data(output.stdout).write(to: file)
    return file
  }

  /// A provider's environment with the built secretctl first on PATH, as an installed one would be.
  func environment(_ instance: ProviderInstance) throws -> [String: String] {
    var environment = instance.environment
    let folder = URL(filePath: try secretctlPath()).deletingLastPathComponent().path
    environment["PATH"] = folder + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    return environment
  }

  /// Stores what the live lists offer: two services and a credential.
  func storeSome(_ instance: ProviderInstance) throws {
    #expect(try secretctl(instance, ["set", "github.com", "alice"], input: "x").status == 0)
    #expect(try secretctl(instance, ["set", "gitlab.com"], input: "y").status == 0)
    #expect(try secretctl(instance, ["credential", "set", "api-token"], input: "z").status == 0)
  }

  @Test func scriptsNameEveryCommandAndOptionOfTheTable() throws {
    let folder = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: folder) }
    for shell in ["bash", "zsh", "fish"] {
      let text = try String(contentsOf: try script(shell, in: folder), encoding: .utf8)
      for spec in commandTable {
        for word in spec.words { #expect(text.contains(word), "\(shell): \(spec.name)") }
        for option in spec.options { #expect(text.contains(option.long), "\(shell): \(option.long)") }
      }
    }
  }

  @Test func bashCompletesCommandsOptionsValuesAndTheServicesStoredNow() async throws {
    try await withProvider(.secretd) { instance in
      try storeSome(instance)
      let file = try script("bash", in: instance.bus.directory)
      let program = try secretctlPath()
      let probe = """
        source '\(file.path)'
        complete -p secretctl
        COMP_WORDS=('\(program)' gi); COMP_CWORD=1; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' search --sh); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' set --collection se); COMP_CWORD=3; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' completion f); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' get gi); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' get --collection session gith); COMP_CWORD=4; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' get github.com gi); COMP_CWORD=3; _secretctl; echo "[${COMPREPLY[*]}]"
        COMP_WORDS=('\(program)' credential d); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' credential get --unit app.service a); COMP_CWORD=5; _secretctl; echo "${COMPREPLY[*]}"
        COMP_WORDS=('\(program)' --allow-plain-transfer ge); COMP_CWORD=2; _secretctl; echo "${COMPREPLY[*]}"
        """
      let bash = try runProcess(
        "/bin/bash", ["-c", probe], environment: instance.environment, in: instance.bus.directory)
      #expect(
        bash.stdoutText == """
          complete -F _secretctl secretctl
          git-credential
          --show-secrets
          session
          fish
          github.com gitlab.com
          github.com
          []
          delete drop-in
          api-token
          get

          """, "\(bash.stderrText)")
    }
  }

  @Test func zshLoadsTheScriptWithCompinitAndCompletesAtItsPrompt() async throws {
    try await withProvider(.secretd) { instance in
      try storeSome(instance)
      let folder = try script("zsh", in: instance.bus.directory).deletingLastPathComponent()
      var environment = try environment(instance)
      environment["TERM"] = "dumb"
      let zsh = try PseudoTerminalChild(try resolveExecutable("zsh").path, ["-f", "-i"], environment: environment)
      // The prompt is written in two pieces, so that its echo is not mistaken for it.
      zsh.type("fpath=('\(folder.path)' $fpath); autoload -Uz compinit; compinit -u -D; PS1='rea''dy> '\n")
      try zsh.waitFor("ready> ")
      for (typed, completed) in [
        ("secretctl gi\t", "secretctl git-credential "), ("secretctl search --show-s\t", "--show-secrets"),
        ("secretctl get gith\t", "secretctl get github.com"), ("secretctl credential dr\t", "credential drop-in"),
        ("secretctl credential get api\t", "credential get api-token"),
      ] {
        zsh.type(typed)
        try zsh.waitFor(completed, seconds: 10)
        zsh.type("\u{15}")  // Ctrl-U: the next line starts empty.
      }
      zsh.type("exit\n")
      #expect(zsh.wait() == 0)
    }
  }

  @Test func fishLoadsTheScriptAndCompletesCommandsOptionsAndTheServicesStoredNow() async throws {
    try await withProvider(.secretd) { instance in
      try storeSome(instance)
      let file = try script("fish", in: instance.bus.directory)
      func complete(_ line: String) throws -> [String] {
        let fish = try runProcess(
          try resolveExecutable("fish").path,
          ["--no-config", "-c", "source '\(file.path)'; complete --do-complete '\(line)'"],
          environment: try environment(instance), in: instance.bus.directory)
        #expect(fish.status == 0, "\(fish.stderrText)")
        return fish.stdoutText.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
      }
      #expect(try complete("secretctl gi") == ["git-credential"])
      #expect(try complete("secretctl search --sh") == ["--show-secrets"])
      #expect(try complete("secretctl set --collection ") == ["default", "session"])
      #expect(try complete("secretctl get gi") == ["github.com", "gitlab.com"])
      #expect(try complete("secretctl get --collection session gith") == ["github.com"])
      #expect(try complete("secretctl get github.com gi") == [], "ACCOUNT is not a service")
      #expect(try complete("secretctl credential d") == ["delete", "drop-in"])
      #expect(try complete("secretctl credential delete ") == ["api-token"])
    }
  }

  @Test func liveWordsAreNamesOnlyAndLeaveOutWhatAShellCannotOffer() async throws {
    try await withProvider(.secretd) { instance in
      try storeSome(instance)
      try await instance.client().write(
        SecretValue("w"), attributes: ["service": "two words"], label: "spaced")
      try await instance.client().write(
        SecretValue("w"), attributes: ["service": "esc\u{1b}[2J"], label: "escaped")
      let services = try secretctl(instance, ["completion", "--words", "services"])
      #expect(services.stdoutText == "github.com\ngitlab.com\n")
      let credentials = try secretctl(instance, ["completion", "--words", "credentials"])
      #expect(credentials.stdoutText == "api-token\n")
    }
  }
}
