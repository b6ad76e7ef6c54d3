// secretd where there is no session bus (SSH logins, CI, containers, WSL): `secretd run --
// COMMAND` and `eval "$(secretd --agent)"`, judged by clients no one here wrote: secret-tool,
// python keyring and git's libsecret helper.
import Foundation
import SecretTestSupport
import Testing

@Suite("headless: secretd run and secretd --agent")
struct HeadlessTests {
  static let gitHelper = URL(filePath: #filePath).deletingLastPathComponent()
    .appending(path: "../../.build/git-credential-libsecret").standardized.path

  /// What each client stores and reads back, one line each: secret-tool, python keyring, git's helper.
  static let clients = """
    printf hunter2 | secret-tool store --label=headless service headless account a && secret-tool lookup service headless account a && echo
    python3 -c 'import keyring; keyring.set_password("headless", "bob", "from-keyring"); print(keyring.get_password("headless", "bob"))'
    printf 'protocol=https\\nhost=example.com\\nusername=u\\npassword=from-git\\n\\n' | "$GIT_HELPER" store >/dev/null
    printf 'protocol=https\\nhost=example.com\\n\\n' | "$GIT_HELPER" get | grep password=
    """

  /// A scratch runtime folder and home, and an environment with no bus in it: the only buses
  /// these tests reach are the private ones `secretd run` and `secretd --agent` start.
  static func scratch() throws -> (folder: URL, environment: [String: String]) {
    let folder = FileManager.default.temporaryDirectory.appending(path: "headless-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var environment = environmentWithoutBus
    (environment["XDG_RUNTIME_DIR"], environment["HOME"]) = (folder.path, folder.path)
    environment["GIT_HELPER"] = gitHelper
    environment["PATH"] = "/usr/bin:/bin"
    return (folder, environment)
  }

  /// Processes whose command line mentions `text`.
  static func processes(mentioning needle: String) -> [String] {
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return pids.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
      guard let line = try? Data(contentsOf: URL(filePath: "/proc/\(pid)/cmdline")) else { return nil }
      let command = String(decoding: line.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
      return command.contains(needle) ? "\(pid): \(command)" : nil
    }
  }

  @Test(
    "secretd run gives one command a bus with secretd, where secret-tool, python keyring and git's helper work; its status is the command's; nothing is left after"
  )
  func runServesOneCommandAndLeavesNothing() async throws {
    let (folder, environment) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: folder) }
    let ran = try await runProcessOnOwnThread(
      secretdPath(), ["run", "--", "sh", "-c", Self.clients + "\nexit 7"], environment: environment, in: folder)
    #expect(ran.status == 7, "\(ran.stderrText)")
    #expect(ran.stdoutText == "hunter2\nfrom-keyring\npassword=from-git\n", "\(ran.stderrText)")
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("secretd-run.") }
    #expect(left.isEmpty, "\(left)")
    #expect(Self.processes(mentioning: "\(folder.path)/secretd-run.").isEmpty)
  }

  @Test(
    "eval \"$(secretd --agent)\" in a shell with no bus serves it and a later shell that runs it again (the same agent, the same secrets); --kill ends it all"
  )
  func theAgentServesLoginAfterLogin() async throws {
    let (folder, environment) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: folder) }
    let secretd = secretdPath()
    let first = try await runProcessOnOwnThread(
      "sh", ["-c", "eval \"$(\"$0\" --agent -s)\" && \(Self.clients) && echo pid=$SECRETD_AGENT_PID", secretd],
      environment: environment, in: folder)
    #expect(first.status == 0, "\(first.stderrText)")
    #expect(first.stdoutText.hasPrefix("hunter2\nfrom-keyring\npassword=from-git\npid="), "\(first.stderrText)")
    let later = try await runProcessOnOwnThread(
      "sh",
      [
        "-c",
        "eval \"$(\"$0\" --agent -s)\" && secret-tool lookup service headless account a && echo && echo pid=$SECRETD_AGENT_PID",
        secretd,
      ], environment: environment, in: folder)
    #expect(later.status == 0, "\(later.stderrText)")
    let firstPID = first.stdoutText.split(separator: "\n").last
    #expect(later.stdoutText == "hunter2\n\(firstPID ?? "")\n", "\(later.stderrText)")
    #expect(!Self.processes(mentioning: "\(folder.path)/secretd-agent").isEmpty)  // positive control
    let killed = try runProcess(secretd, ["--agent", "--kill", "-s"], environment: environment, in: folder)
    #expect(killed.stdoutText == "unset DBUS_SESSION_BUS_ADDRESS;\nunset SECRETD_AGENT_PID;\n", "\(killed.stderrText)")
    try await eventually("the agent's processes to end") {
      Self.processes(mentioning: "\(folder.path)/secretd-agent").isEmpty
    }
    #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "secretd-agent").path))
  }

  @Test("in fish, the agent's --fish lines serve secret-tool, and its --kill lines forget the bus")
  func theAgentSpeaksFish() async throws {
    let (folder, environment) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: folder) }
    let script = """
      eval ($argv[1] --agent --fish | string collect); or exit 10
      printf fishy | secret-tool store --label=fish service fish account f; or exit 11
      secret-tool lookup service fish account f; and echo
      $argv[1] --agent --kill --fish
      """
    let fish = try await runProcessOnOwnThread(
      "fish", ["-c", script, secretdPath()], environment: environment, in: folder)
    #expect(fish.status == 0, "\(fish.stderrText)")
    #expect(
      fish.stdoutText == "fishy\nset -e DBUS_SESSION_BUS_ADDRESS;\nset -e SECRETD_AGENT_PID;\n", "\(fish.stderrText)")
  }

  @Test("on a bus that already has a Secret Service, secretd --agent starts nothing and prints nothing to evaluate")
  func theAgentStartsNothingWhereAProviderServes() async throws {
    try await withProvider(.secretd) { instance in
      let agent = try instance.run(secretdPath(), ["--agent"])
      #expect(agent.status == 0)
      #expect(agent.stdout.isEmpty)
      #expect(agent.stderrText.contains("already has a Secret Service"), "\(agent.stderrText)")
    }
  }

}
