// `secretctl setup` where no systemd user manager runs (a container, dbus-run-session): the
// activation file alone. Under a real user manager, with the packaged unit, the container check
// of the Debian packages runs it (PackagingTests).
import Foundation
import SecretTestSupport
import Testing

@Suite("secretctl setup without a user manager")
struct SetupCommandTests {
  /// A home of its own, no user manager and no bus (the address names a socket that does not
  /// exist, so neither the user's session bus nor a private one is reached): systemctl --user
  /// finds nothing.
  static func environment(_ home: URL) -> [String: String] {
    [
      "HOME": home.path, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LANG": "C.UTF-8",
      "XDG_DATA_HOME": home.appending(path: "data").path, "XDG_CONFIG_HOME": home.appending(path: "config").path,
      "XDG_RUNTIME_DIR": home.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/none",
    ]
  }

  @Test("setup writes the activation file for the secretd beside secretctl; --undo removes it")
  func setupAndUndo() throws {
    let home = FileManager.default.temporaryDirectory.appending(path: "setup-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let activation = home.appending(path: "data/dbus-1/services/org.freedesktop.secrets.service")
    let setup = try runProcess(try secretctlPath(), ["setup"], environment: Self.environment(home), in: home)
    #expect(setup.status == 0, "\(setup.stderrText)")
    #expect(setup.stdoutText.contains("no systemd user manager here"), "\(setup.stdoutText)")
    let text = try String(contentsOf: activation, encoding: .utf8)
    #expect(text.contains("\nName=org.freedesktop.secrets\n"), "\(text)")
    #expect(text.contains("\nExec=\(try builtExecutable("secretd").path)\n"), "\(text)")
    #expect(text.contains("\nSystemdService=secretd.service\n"), "\(text)")
    let undo = try runProcess(try secretctlPath(), ["setup", "--undo"], environment: Self.environment(home), in: home)
    #expect(undo.status == 0, "\(undo.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: activation.path))
  }

  @Test("--undo leaves an activation file that starts another provider alone, and says so")
  func undoLeavesAnotherProvidersFile() throws {
    let home = FileManager.default.temporaryDirectory.appending(path: "setup-\(UUID().uuidString)")
    let activation = home.appending(path: "data/dbus-1/services/org.freedesktop.secrets.service")
    try FileManager.default.createDirectory(
      at: activation.deletingLastPathComponent(), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let foreign = "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/usr/bin/keepassxc\n"
    try Data(foreign.utf8).write(to: activation)
    let undo = try runProcess(try secretctlPath(), ["setup", "--undo"], environment: Self.environment(home), in: home)
    #expect(undo.status == 2)
    #expect(undo.stderrText.contains("does not start this secretd"), "\(undo.stderrText)")
    #expect(try String(contentsOf: activation, encoding: .utf8) == foreign)
  }
}
