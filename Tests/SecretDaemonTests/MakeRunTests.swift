import Foundation
import SecretTestSupport
import Testing

/// `make run` on a machine without a session bus: scripts/run starts a private bus, prints the
/// line to paste, and secret-tool then works against secretd; SIGTERM stops both.
@Suite("make run")
struct MakeRunTests {
  static let script = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../scripts/run")
    .standardized

  @Test func withoutASessionBusItServesAPrivateBusAndPrintsItsAddress() async throws {
    let folder = URL(filePath: NSTemporaryDirectory()).appending(path: "make-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let output = folder.appending(path: "stdout")
    let stdout = open(output.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { [stdout, null].forEach { close($0) } }
    var environment = environmentWithoutBus
    environment["SECRETD"] = try builtExecutable("secretd").path
    environment["TMPDIR"] = folder.path
    let run = try ChildProcess(Self.script, [], environment: environment, stdin: null, stdout: stdout, stderr: null)
    // SIGTERM, as Ctrl-C would: the script's trap then stops the bus and secretd it started.
    defer {
      run.signal(SIGTERM)
      run.wait()
    }

    let address = try await withDeadline(seconds: 20, "the export line") {
      while true {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("export DBUS_SESSION_BUS_ADDRESS=") }) {
          return String(line.dropFirst("export DBUS_SESSION_BUS_ADDRESS=".count))
        }
        try await Task.sleep(for: .milliseconds(20))
      }
    }
    var client = ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": environment["PATH"] ?? "/usr/bin:/bin"]
    client["HOME"] = folder.path
    let wait = try runProcess(
      "gdbus", ["wait", "--session", "--timeout", "10", "org.freedesktop.secrets"], environment: client, in: folder)
    #expect(wait.status == 0)
    let store = try runProcess(
      "secret-tool", ["store", "--label=run", "service", "run", "account", "a"], input: Array("pasted".utf8),
      environment: client, in: folder)
    #expect(store.status == 0)
    let lookup = try runProcess(
      "secret-tool", ["lookup", "service", "run", "account", "a"], environment: client, in: folder)
    #expect(lookup.stdoutText == "pasted")

    // Positive control: while it serves, the bus and secretd are found by the folder they name.
    let serving = processes(mentioning: folder.path)
    #expect(serving.count == 2, "dbus-daemon and secretd: \(serving)")
    run.signal(SIGTERM)
    #expect(run.wait() == 0)
    try await withDeadline(seconds: 10, "no dbus-daemon or secretd left") {
      while !processes(mentioning: folder.path).isEmpty { try await Task.sleep(for: .milliseconds(20)) }
    }
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("secretd-bus") }.isEmpty)
  }
}

/// The processes whose command line names `text`, such as a bus's folder.
private func processes(mentioning text: String) -> [String] {
  let own = String(getpid())
  let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  return pids.filter { $0.allSatisfy(\.isNumber) && $0 != own }.compactMap { pid in
    guard let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
    let commandLine = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    return commandLine.contains(text) ? "\(pid): \(commandLine)" : nil
  }
}
