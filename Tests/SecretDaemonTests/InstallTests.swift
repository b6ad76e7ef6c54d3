// secretd installed as `make install` does: under a real systemd user manager, and on a bus
// that has no systemd.
import Foundation
import SecretTestSupport
import TestGates
import Testing

@Suite("installed")
struct InstallTests {
  static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test(
    "under a real systemd user manager the unit starts on a client's first call, runs sandboxed, stops and starts, and falls back where user namespaces are forbidden",
    .needsRoot("booting a container with systemd needs root"))
  func underARealUserManager() async throws {
    let script = Self.packageRoot.appending(path: "scripts/check-unit-in-container")
    let check = try await ContainerCheck.run(
      script, [try builtExecutable("secretd").path, try builtExecutable("secretctl").path])
    guard let (status, transcript) = try check.transcript() else { return }
    #expect(status == 0, "\(transcript)")
    #expect(!transcript.contains("FAIL"), "\(transcript)")
    // The checks ran, not just the script: every one of them reported.
    #expect(transcript.contains(" passed, 0 failed"), "\(transcript)")
  }

  @Test(
    "under a real systemd user manager the store survives 20 SIGKILLs and a restart onto a new binary, in secret memory, and units get their credentials",
    .needsRoot("booting a container with systemd needs root"))
  func storeAndCredentialsUnderARealUserManager() async throws {
    let script = Self.packageRoot.appending(path: "scripts/check-store-in-container")
    let check = try await ContainerCheck.run(
      script,
      [
        try builtExecutable("secretd").path, try builtExecutable("secretctl").path,
        try builtExecutable("credential-service").path,
      ])
    guard let (status, transcript) = try check.transcript() else { return }
    #expect(status == 0, "\(transcript)")
    #expect(!transcript.contains("FAIL"), "\(transcript)")
    #expect(transcript.contains(" passed, 0 failed"), "\(transcript)")
  }

  @Test(
    "under a real systemd user manager, after setup --persistent, a login item survives a kill, stop and start, and a reboot (locked until unlocked); a session item only the kill; no plaintext on disk",
    .needsRoot("booting a container with systemd needs root"))
  func persistenceUnderARealUserManager() async throws {
    let script = Self.packageRoot.appending(path: "scripts/check-persistence-in-container")
    let check = try await ContainerCheck.run(
      script,
      [
        try builtExecutable("secretd").path, try builtExecutable("secretctl").path,
        try builtExecutable("credential-service").path,
      ])
    guard let (status, transcript) = try check.transcript() else { return }
    #expect(status == 0, "\(transcript)")
    #expect(!transcript.contains("FAIL"), "\(transcript)")
    #expect(transcript.contains(" passed, 0 failed"), "\(transcript)")
  }

  @Test("on a bus without systemd, a client's first call starts the installed secretd through the activation file")
  func activationWithoutSystemd() async throws {
    let home = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: home) }
    var environment = [
      "HOME": home.path, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LANG": "C.UTF-8",
      "XDG_DATA_HOME": home.appending(path: ".local/share").path,
      "XDG_CONFIG_HOME": home.appending(path: ".config").path,
      // No user manager and no bus here: systemctl --user must not find the test runner's, and
      // the address points at nothing.
      "XDG_RUNTIME_DIR": home.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/none",
    ]
    let install = try runProcess(
      Self.packageRoot.appending(path: "scripts/install").path,
      [
        try builtExecutable("secretd").path, try builtExecutable("secretctl").path,
        try builtExecutable("secretctl-bao").path,
      ], environment: environment, in: home)
    try #require(install.status == 0, "\(install.stderrText)")
    #expect(install.stdoutText.contains("no systemd user manager here"), "\(install.stdoutText)")
    // It lists every binary it installed, and says how to reach them from a shell.
    let bin = home.appending(path: ".local/bin").path
    #expect(install.stdoutText.contains("installed \(bin)/secretd \(bin)/secretctl \(bin)/secretctl-bao\n"))
    #expect(install.stdoutText.contains("\(bin) is not on your PATH"), "\(install.stdoutText)")
    // The installed secretctl finds secretctl-bao beside it: an OpenBao that is not there is
    // OpenBao's error, not a missing helper's.
    var baoEnvironment = environment
    baoEnvironment["BAO_ADDR"] = "http://127.0.0.1:1"
    baoEnvironment["BAO_TOKEN"] = "t"
    let read = try runProcess(
      home.appending(path: ".local/bin/secretctl").path, ["read", "bao://secret/x"], environment: baoEnvironment,
      in: home)
    #expect(read.status == 3)
    #expect(read.stderrText.contains("OpenBao cannot be reached at http://127.0.0.1:1"), "\(read.stderrText)")
    let activation = try String(
      contentsOf: home.appending(path: ".local/share/dbus-1/services/org.freedesktop.secrets.service"), encoding: .utf8)
    #expect(activation.contains("Exec=\(home.path)/.local/bin/secretd\n"), "\(activation)")
    // The clients below run on the private bus dbus-run-session starts for them, and no other.
    environment["DBUS_SESSION_BUS_ADDRESS"] = nil
    let sessionEnvironment = environment
    // dbus-run-session reads the session services of $XDG_DATA_HOME, as a container's bus does.
    let script = """
      printf %s activated | secret-tool store --label=a service activation account a || exit 10
      test "$(secret-tool lookup service activation account a)" = activated || exit 11
      owner=$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | awk '{print $2}' | tr -d ',)')
      test "$(cat /proc/$owner/comm)" = secretd || exit 12
      """
    let run = try await runProcessOnOwnThread(
      "dbus-run-session", ["--", "sh", "-c", script], environment: sessionEnvironment, in: home)
    #expect(run.status == 0, "exit \(run.status): \(run.stderrText)")
  }

  @Test(
    "install puts the manual pages and completions where man and the shells look for a user's, and uninstall removes everything install put, wherever XDG_CONFIG_HOME and XDG_DATA_HOME point"
  )
  func uninstallRemovesEverythingInstallPut() throws {
    let home = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: home) }
    let environment = [
      "HOME": home.path, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
      "XDG_DATA_HOME": home.appending(path: "data").path, "XDG_CONFIG_HOME": home.appending(path: "config").path,
      "XDG_RUNTIME_DIR": home.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/none",
    ]
    func files() -> [String] {
      let walker = FileManager.default.enumerator(atPath: home.path)
      return (walker?.allObjects as? [String] ?? []).filter {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: home.appending(path: $0).path, isDirectory: &folder)
          && !folder.boolValue
      }.sorted()
    }
    let before = files()
    let install = try runProcess(
      Self.packageRoot.appending(path: "scripts/install").path,
      [try builtExecutable("secretd").path, try builtExecutable("secretctl").path], environment: environment, in: home)
    try #require(install.status == 0, "\(install.stderrText)")
    let installed = Set(files()).subtracting(before)
    for expected in [
      ".local/share/man/man1/secretctl.1", ".local/share/man/man8/secretd.8",
      "data/bash-completion/completions/secretctl", "data/zsh/site-functions/_secretctl",
      "data/fish/vendor_completions.d/secretctl.fish", "config/systemd/user/secretd-credentials.socket",
      "data/dbus-1/services/org.freedesktop.secrets.service",
    ] {
      #expect(installed.contains(expected), "\(expected) not in \(installed.sorted())")
    }
    let manual = try String(contentsOf: home.appending(path: ".local/share/man/man8/secretd.8"), encoding: .utf8)
    #expect(manual.contains("secretd run"), "the manual page is secretd's own")
    let uninstall = try runProcess(
      Self.packageRoot.appending(path: "scripts/install").path, ["--uninstall"], environment: environment, in: home)
    #expect(uninstall.status == 0, "\(uninstall.stderrText)")
    #expect(Set(files()).subtracting(before).isEmpty, "left: \(Set(files()).subtracting(before).sorted())")
  }
}
