// `secretctl pam-unlock` run as pam_exec runs it (expose_authtok: the password and a NUL on stdin,
// the user in PAM_USER), against secretd --persistent on a private bus. The container check
// (scripts/check-persistence-in-container) runs it through a real PAM stack at login.
import Foundation
import SecretTestSupport
import Testing

@Suite("pam-unlock: the login password opens secretd's persistent collection")
struct PamUnlockCommandTests {
  static let userName = ProcessInfo.processInfo.userName

  /// pam-unlock as pam_exec runs it; `waiting` does the background copy's part in this process.
  static func pamUnlock(_ instance: ProviderInstance, _ password: String, bus: String? = nil, waiting: Bool = true)
    throws -> ProcessOutput
  {
    try runProcess(
      try secretctlPath(), ["pam-unlock", "--bus", bus ?? instance.busAddress] + (waiting ? ["--wait", "5"] : []),
      input: Array(password.utf8) + [0],
      environment: instance.environment.merging(["PAM_USER": userName, "PAM_TYPE": "auth"]) { $1 },
      in: instance.bus.directory)
  }

  static func state(_ instance: ProviderInstance) throws -> String {
    let status = try secretctl(instance, ["status"]).stdoutText
    let line = status.split(separator: "\n").first { $0.hasPrefix("persistent collection: ") } ?? ""
    return String(line.dropFirst("persistent collection: ".count).prefix { $0.isLetter })
  }

  /// login with a passphrase, a login unlocker holding `password`, one item, then locked.
  static func lockedWithLoginUnlocker(_ instance: ProviderInstance, _ password: String) throws {
    #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "passphrase").status == 0)
    let added = try secretctl(instance, ["unlocker", "add", "login", "--password-stdin"], input: password)
    #expect(added.stdoutText == "unlocker 2 added\n", "\(added.stderrText)")
    #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "1  passphrase\n2  login\n")
    #expect(try secretctl(instance, ["set", "kept", "a"], input: "value").status == 0)
    #expect(try secretctl(instance, ["lock"]).status == 0)
    #expect(try state(instance) == "locked")
  }

  @Test("the login password opens login; another is refused with status 3 and changes nothing")
  func loginPasswordUnlocks() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      try Self.lockedWithLoginUnlocker(instance, "login password")
      let wrong = try Self.pamUnlock(instance, "not the login password")
      #expect(wrong.status == 3)
      #expect(wrong.stderrText.contains("did not open login"), "\(wrong.stderrText)")
      #expect(try Self.state(instance) == "locked")
      let right = try Self.pamUnlock(instance, "login password")
      #expect(right.status == 0, "\(right.stderrText)")
      #expect(try Self.state(instance) == "unlocked")
      #expect(try secretctl(instance, ["get", "kept", "a"]).stdoutText == "value")
    }
  }

  @Test("without a login unlocker nothing is tried: not even a passphrase the password equals")
  func noLoginUnlockerNoAttempt() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "same").status == 0)
      #expect(try secretctl(instance, ["lock"]).status == 0)
      let output = try Self.pamUnlock(instance, "same")
      #expect(output.status == 0, "\(output.stderrText)")
      #expect(try Self.state(instance) == "locked")
      // Positive control: the same password opens it as a login unlocker.
      #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "same").status == 0)
      #expect(try secretctl(instance, ["unlocker", "add", "login", "--password-stdin"], input: "same").status == 0)
      #expect(try secretctl(instance, ["lock"]).status == 0)
      #expect(try Self.pamUnlock(instance, "same").status == 0)
      #expect(try Self.state(instance) == "unlocked")
    }
  }

  @Test("a collection with no passphrase yet is left so: pam-unlock sets none")
  func newCollectionIsLeftAlone() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      #expect(try Self.state(instance) == "new")
      let output = try Self.pamUnlock(instance, "login password")
      #expect(output.status == 0, "\(output.stderrText)")
      #expect(try Self.state(instance) == "new")
      // Positive control: unlock itself sets the first passphrase.
      #expect(try secretctl(instance, ["unlock", "--password-stdin"], input: "login password").status == 0)
      #expect(try Self.state(instance) == "unlocked")
    }
  }

  @Test("as PAM runs it, it returns at once, and a copy unlocks login once the bus is there")
  func waitsForTheBusInTheBackground() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      try Self.lockedWithLoginUnlocker(instance, "login password")
      let socket = try #require(
        instance.busAddress.split(separator: ",").first.map { String($0.dropFirst("unix:path=".count)) })
      let later = instance.bus.directory.appending(path: "bus-later").path
      let output = try Self.pamUnlock(instance, "login password", bus: "unix:path=\(later)", waiting: false)
      #expect(output.status == 0, "\(output.stderrText)")
      #expect(try Self.state(instance) == "locked")
      try FileManager.default.createSymbolicLink(atPath: later, withDestinationPath: socket)
      try await eventually("login unlocked by the waiting copy", seconds: 20) { try Self.state(instance) == "unlocked" }
    }
  }

  @Test("without PAM_USER it is a usage error")
  func needsItsUser() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      let bare = try runProcess(
        try secretctlPath(), ["pam-unlock", "--bus", instance.busAddress], input: [0x41, 0],
        environment: instance.environment, in: instance.bus.directory)
      #expect(bare.status == 2 && bare.stderrText.contains("PAM_USER is not set"), "\(bare.stderrText)")
    }
  }
}
