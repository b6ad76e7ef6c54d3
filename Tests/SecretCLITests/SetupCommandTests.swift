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

  @Test(
    "setup --persistent starts secretd with --persistent, lets the unit write its private data folder only; a later setup keeps it; --undo ends it and keeps the data"
  )
  func persistentSetup() throws {
    let home = FileManager.default.temporaryDirectory.appending(path: "setup-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let environment = Self.environment(home)
    let activation = home.appending(path: "data/dbus-1/services/org.freedesktop.secrets.service")
    let dropIn = home.appending(path: "config/systemd/user/secretd.service.d/persistent.conf")
    let data = home.appending(path: "data/secretd")
    let secretd = try builtExecutable("secretd").path
    func setup(_ arguments: [String]) throws -> ProcessOutput {
      try runProcess(try secretctlPath(), ["setup"] + arguments, environment: environment, in: home)
    }
    let plain = try setup([])
    #expect(plain.status == 0 && !FileManager.default.fileExists(atPath: dropIn.path), "\(plain.stderrText)")
    let persistent = try setup(["--persistent"])
    #expect(persistent.status == 0, "\(persistent.stderrText)")
    #expect(try String(contentsOf: activation, encoding: .utf8).contains("\nExec=\(secretd) --persistent\n"))
    let unit = try String(contentsOf: dropIn, encoding: .utf8)
    #expect(unit.contains("\nExecStart=\nExecStart=\(secretd) --persistent\n"), "\(unit)")
    #expect(unit.contains("\nReadWritePaths=\(data.path)\n"), "\(unit)")
    let mode = try FileManager.default.attributesOfItem(atPath: data.path)[.posixPermissions] as? Int
    #expect(mode == 0o700)
    let again = try setup([])
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(try String(contentsOf: activation, encoding: .utf8).contains("\nExec=\(secretd) --persistent\n"))
    try Data("sealed".utf8).write(to: data.appending(path: "login.log"))
    let undo = try setup(["--undo"])
    #expect(undo.status == 0, "\(undo.stderrText)")
    #expect(
      !FileManager.default.fileExists(atPath: dropIn.path) && !FileManager.default.fileExists(atPath: activation.path))
    #expect(FileManager.default.fileExists(atPath: data.appending(path: "login.log").path))
    let memoryOnly = try setup([])
    #expect(
      try String(contentsOf: activation, encoding: .utf8).contains("\nExec=\(secretd)\n"), "\(memoryOnly.stdoutText)")
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
