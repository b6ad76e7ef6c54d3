// systemd credentials from secretd, asked the way the service manager asks for a unit with
// `LoadCredential=ID:%t/secretd/credentials`: a connection from an abstract address naming the
// unit and the credential, made by a process in that unit's control group. (A real user manager
// does this in scripts/check-unit-in-container.)
import Foundation
import SecretTestSupport
import SystemCalls
import Testing

@testable import SecretDaemon

/// Asks secretd for credentials as the service manager does, from a control group of a unit's
/// name (made at the top of the cgroup tree, under a slice of the test's own, and removed at the
/// end), or from the root group.
struct CredentialAsker {
  let instance: ProviderInstance
  let cgroup: URL
  let hierarchy: URL

  static let script = """
    import os, socket, sys
    unit, credential, path = sys.argv[1:]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.bind('\\0' + os.urandom(8).hex() + '/unit/' + unit + '/' + credential)
    connection.connect(path)
    received = b''
    while chunk := connection.recv(65536):
        received += chunk
    sys.stdout.buffer.write(received)
    """

  /// Where the cgroup v2 tree is mounted.
  static var hierarchy: URL? {
    let mounts = (try? readProcFile("/proc/self/mounts")) ?? ""
    let line = mounts.split(separator: "\n").first { $0.split(separator: " ").dropFirst(2).first == "cgroup2" }
    return line.map { URL(filePath: String($0.split(separator: " ")[1])) }
  }

  /// A slice of this test's own, for the unit groups below it.
  static func slice() -> String { "secretd-test-\(UUID().uuidString.prefix(8)).slice" }

  /// Asks from `group` (a path under the cgroup tree), or from the root group when it is empty.
  init(_ instance: ProviderInstance, group: String) throws {
    self.instance = instance
    hierarchy = try #require(Self.hierarchy, "no cgroup2 tree mounted")
    cgroup = group.isEmpty ? hierarchy : hierarchy.appending(path: group)
    try FileManager.default.createDirectory(at: cgroup, withIntermediateDirectories: true)
  }

  /// Removes the groups made for this asker, innermost first.
  func remove() {
    var group = cgroup.standardizedFileURL
    while group.path.count > hierarchy.standardizedFileURL.path.count, rmdir(group.path) == 0 {
      group.deleteLastPathComponent()
    }
  }

  /// What secretd answers `unit`'s request for `credential`, asked from this control group.
  func ask(for unit: String, _ credential: String) throws -> [UInt8] {
    let socket = instance.bus.directory.appending(path: "run/\(CredentialServer.relativePath)").path
    let asked = try instance.run(
      "sh",
      [
        "-c", "echo $$ > \"$0\" && exec \"$@\"", cgroup.appending(path: "cgroup.procs").path,
        SecretStorageSuiteTests.python, "-c", Self.script, unit, credential, socket,
      ])
    try #require(asked.status == 0, "\(asked.stderrText)")
    return asked.stdout
  }
}

@Suite("systemd credentials")
struct CredentialTests {
  static func secretctl(_ instance: ProviderInstance, _ arguments: [String], input: String) throws {
    let stored = try instance.run(try builtExecutable("secretctl").path, arguments, input: Array(input.utf8))
    try #require(stored.status == 0, "\(stored.stderrText)")
  }

  static func log(_ instance: ProviderInstance) -> String {
    (try? String(contentsOf: instance.bus.directory.appending(path: "secretd.log"), encoding: .utf8)) ?? ""
  }

  @Test(
    "a unit gets its own credential, else the shared one, never another unit's; a missing one gets nothing and a log line naming it",
    .needsRoot("a control group of a unit's name is made under the test's own"))
  func whichCredentialAUnitGets() async throws {
    try await withProvider(.secretd) { instance in
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "shared-token")
      try Self.secretctl(instance, ["credential", "set", "--unit", "app.service", "api-token"], input: "app's own")
      try Self.secretctl(instance, ["credential", "set", "--unit", "other.service", "db"], input: "other's")
      let app = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
      defer { app.remove() }
      let worker = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/worker.service")
      defer { worker.remove() }
      #expect(try app.ask(for: "app.service", "api-token") == Array("app's own".utf8))
      #expect(try worker.ask(for: "worker.service", "api-token") == Array("shared-token".utf8))
      #expect(try worker.ask(for: "worker.service", "db").isEmpty)
      #expect(try worker.ask(for: "worker.service", "nothing").isEmpty)
      let log = Self.log(instance)
      #expect(log.contains("credential api-token for app.service: given (9 bytes)"), "\(log)")
      #expect(log.contains("credential db for worker.service: none stored"), "\(log)")
      #expect(log.contains("credential nothing for worker.service: none stored"), "\(log)")
      #expect(!log.contains("shared-token") && !log.contains("app's own"))
    }
  }

  @Test(
    "a request naming a unit the asking process is not in is refused",
    .needsRoot("a control group of a unit's name is made under the test's own"))
  func aRequestFromOutsideTheUnitIsRefused() async throws {
    try await withProvider(.secretd) { instance in
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "shared-token")
      let outsider = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/outsider.service")
      defer { outsider.remove() }
      // Positive control: its own unit gets it.
      #expect(try outsider.ask(for: "outsider.service", "api-token") == Array("shared-token".utf8))
      #expect(try outsider.ask(for: "app.service", "api-token").isEmpty)
      #expect(Self.log(instance).contains("credential api-token for app.service: pid"), "\(Self.log(instance))")
    }
  }

  @Test(
    "the largest credential `credential set` takes is given to a unit at the default locked-memory limit; a byte more is refused with the reason",
    .needsRoot("a control group of a unit's name is made at the top of the tree"))
  func credentialSetTakesOnlyWhatSecretdCanServe() async throws {
    try await withProvider(.secretd) { instance in
      let largest = String(repeating: "k", count: 64 << 10)  // secretctl's CredentialCommands.largestServed
      try Self.secretctl(instance, ["credential", "set", "big"], input: largest)
      let app = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
      defer { app.remove() }
      #expect(try app.ask(for: "app.service", "big") == Array(largest.utf8))
      #expect(Self.log(instance).contains("RLIMIT_MEMLOCK 8 MiB"), "not the default limit: \(Self.log(instance))")
      let tooLarge = try instance.run(
        try builtExecutable("secretctl").path, ["credential", "set", "bigger"], input: Array((largest + "k").utf8))
      #expect(tooLarge.status == 2)
      #expect(tooLarge.stderrText.contains("more than secretd hands a unit (at most 65536"), "\(tooLarge.stderrText)")
    }
  }

  @Test(
    "a credential in a locked collection is not given, and the log says it is locked",
    .needsRoot("a control group of a unit's name is made under the test's own"))
  func aLockedCollectionGivesNothing() async throws {
    try await withProvider(.secretd) { instance in
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "shared-token")
      let app = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
      defer { app.remove() }
      #expect(try app.ask(for: "app.service", "api-token") == Array("shared-token".utf8))
      try Self.secretctl(instance, ["lock"], input: "")
      #expect(try app.ask(for: "app.service", "api-token").isEmpty)
      #expect(
        Self.log(instance).contains("credential api-token for app.service: the collection"), "\(Self.log(instance))")
    }
  }

  @Test(
    "a credential asked for while the persistent collection is locked is said to be locked, not missing",
    .needsRoot("a control group of a unit's name is made under the test's own"))
  func aLockedPersistentCollectionSaysLockedNotMissing() async throws {
    try await withProvider(.secretd, arguments: PersistentCollectionTests.arguments) { instance in
      #expect(try PersistentCollectionTests.unlock(instance, "passphrase").status == 0)
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "lasting-token")
      let app = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
      defer { app.remove() }
      #expect(try app.ask(for: "app.service", "api-token") == Array("lasting-token".utf8))
      // Locking wipes login's items from memory, as a start leaves them until the unlock.
      try Self.secretctl(instance, ["lock"], input: "")
      #expect(try app.ask(for: "app.service", "api-token").isEmpty)
      let log = Self.log(instance)
      #expect(log.contains("credential api-token for app.service: the collection"), "\(log)")
      #expect(log.contains("unlock it (`secretctl unlock`)") && !log.contains("none stored"), "\(log)")
    }
  }

  @Test(
    "a request from a group that only contains the unit's name (a group made inside another unit) is refused",
    .needsRoot("a control group of a unit's name is made at the top of the tree"))
  func aRequestFromAGroupNamedLikeTheUnitInsideAnotherIsRefused() async throws {
    try await withProvider(.secretd) { instance in
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "shared-token")
      let slice = CredentialAsker.slice()
      let victim = try CredentialAsker(instance, group: "\(slice)/victim.service")
      defer { victim.remove() }
      let nested = try CredentialAsker(instance, group: "\(slice)/attacker.service/victim.service")
      defer { nested.remove() }
      // Positive control: the unit's own group gets it.
      #expect(try victim.ask(for: "victim.service", "api-token") == Array("shared-token".utf8))
      #expect(try nested.ask(for: "victim.service", "api-token").isEmpty)
      #expect(
        Self.log(instance).contains("attacker.service/victim.service is not the unit's own"), "\(Self.log(instance))")
    }
  }

  @Test(
    "a request from the root control group, outside any unit, is refused",
    .needsRoot("moving a process to the root control group"))
  func aRequestFromTheRootGroupIsRefused() async throws {
    try await withProvider(.secretd) { instance in
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "shared-token")
      let unit = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
      defer { unit.remove() }
      #expect(try unit.ask(for: "app.service", "api-token") == Array("shared-token".utf8))
      let root = try CredentialAsker(instance, group: "")
      #expect(try root.ask(for: "app.service", "api-token").isEmpty)
      #expect(Self.log(instance).contains("runs in the root control group"), "\(Self.log(instance))")
    }
  }

  @Test(
    "a name with a newline is logged escaped: no client writes a log line of its own",
    .needsRoot("a control group of a unit's name is made at the top of the tree"))
  func aNameWithANewlineCannotForgeALogLine() async throws {
    try await withProvider(.secretd) { instance in
      let app = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
      defer { app.remove() }
      #expect(try app.ask(for: "app.service", "id\nsecretd: forged").isEmpty)
      let log = Self.log(instance)
      #expect(log.contains("credential id\\u{a}secretd: forged for app.service: none stored"), "\(log)")
      #expect(!log.split(separator: "\n").contains { $0.hasPrefix("secretd: forged") }, "\(log)")
    }
  }

  /// Opens `count` requests for `unit`'s credential and reads none of them, then asks for
  /// `other`'s from its group; prints what that one got.
  static let hogs = """
    import os, socket, sys
    path, count, unit, hog_group, other, other_group = sys.argv[1:]
    def connect(unit, credential):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.bind('\\0' + os.urandom(8).hex() + '/unit/' + unit + '/' + credential)
        connection.connect(path)
        return connection
    def move_to(group):
        with open(group + '/cgroup.procs', 'w') as procs:
            procs.write(str(os.getpid()))
    move_to(hog_group)
    unread = [connect(unit, 'big') for _ in range(int(count))]
    move_to(other_group)
    connection = connect(other, 'small')
    received = b''
    while chunk := connection.recv(65536):
        received += chunk
    sys.stdout.buffer.write(received)
    """

  @Test(
    "a unit's credential is answered while 12 requests for a large one wait unread, before any of them is given up",
    .needsRoot("control groups of units' names are made at the top of the tree"))
  func unreadRequestsHoldUpNoOtherUnit() async throws {
    try await withProvider(.secretd) { instance in
      // Larger than a socket's buffer, so that a send to a peer that does not read waits; stored
      // with secret-tool, past what `credential set` takes (as an older secretctl stored it).
      let large = Array(repeating: UInt8(ascii: "x"), count: 300_000)
      let stored = try instance.run(
        "secret-tool", ["store", "--label=big", "credential", "big", "unit", "hog.service"], input: large)
      try #require(stored.status == 0, "\(stored.stderrText)")
      try Self.secretctl(instance, ["credential", "set", "--unit", "app.service", "small"], input: "small one")
      let slice = CredentialAsker.slice()
      let hog = try CredentialAsker(instance, group: "\(slice)/hog.service")
      defer { hog.remove() }
      let app = try CredentialAsker(instance, group: "\(slice)/app.service")
      defer { app.remove() }
      let socket = instance.bus.directory.appending(path: "run/\(CredentialServer.relativePath)").path
      let asked = try instance.run(
        SecretStorageSuiteTests.python,
        ["-c", Self.hogs, socket, "12", "hog.service", hog.cgroup.path, "app.service", app.cgroup.path])
      try #require(asked.status == 0, "\(asked.stderrText)")
      #expect(asked.stdout == Array("small one".utf8))
      // Served one at a time, the hogs' requests were each given up (after a deadline) before it.
      let log = try await Self.waitForLog(instance, containing: "credential small for app.service: given")
      let given = try #require(log.range(of: "credential small for app.service: given"))
      #expect(!log[..<given.lowerBound].contains("credential big for hog.service: could not be written"), "\(log)")
    }
  }

  static func waitForLog(_ instance: ProviderInstance, containing text: String) async throws -> String {
    try await eventually("the log says \(text)", seconds: 30) { Self.log(instance).contains(text) }
    return Self.log(instance)
  }
}

@Suite("the unit check of a credential request")
struct UnitCheckTests {
  @Test(
    "only the unit's own group, below its service manager with only slices between, passes",
    arguments: [
      ("0::/user.slice/user-0.slice/user@0.service/app.slice/app.service\n", true),
      ("0::/user.slice/user-0.slice/user@0.service/app.service\n", true),
      ("0::/system.slice/app.service\n", true),
      ("0::/user.slice/user-0.slice/user@0.service/app.slice/other.service/app.service\n", false),
      ("0::/user.slice/user-0.slice/user@0.service/app.slice/other.service/user@0.service/app.service\n", false),
      ("0::/user.slice/user-0.slice/user@0.service/app.slice/app.service/payload\n", false),
      ("0::/user.slice/user-0.slice/user@0.service\n", false),
      ("0::/\n", false),
      ("1:name=systemd:/app.slice/app.service\n", false),
      ("", false),
    ])
  func onlyTheUnitsOwnGroupPasses(file: String, passes: Bool) {
    let refusal = UnitCheck.refusal(cgroupFile: file, for: "app.service")
    #expect((refusal == nil) == passes, "\(file): \(String(describing: refusal))")
  }

  @Test("a request whose /proc entry cannot be read (hidden, or no cgroup v2 line) is refused")
  func anUnreadableGroupIsRefused() {
    #expect(UnitCheck.refusal(cgroupFile: nil, for: "app.service") == .unreadableControlGroup)
    #expect(UnitCheck.refusal(cgroupFile: "0::/\n", for: "app.service") == .rootControlGroup)
  }

  @Test("a peer that exited before it was checked is refused, though its group was the unit's")
  func aPeerThatExitedFirstIsRefused() throws {
    let directory = FileManager.default.temporaryDirectory.appending(path: "unit-check-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appending(path: "socket").path
    let listening = try UnixSocket.listen(at: path, permissions: .ownerReadWrite)
    defer { listening.descriptor.close() }
    let connectScript = "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])"
    let environment = environmentWithoutBus
    // Positive control: a peer that is still there is judged by its group.
    let input = try ChildProcess.makePipe()
    let waiting = try ChildProcess(
      URL(filePath: SecretStorageSuiteTests.python), ["-c", connectScript + "; sys.stdin.read()", path],
      environment: environment, stdin: input.read, stdout: 2, stderr: 2)
    close(input.read)
    let live = try listening.accept()
    defer { live.descriptor.close() }
    let liveRefusal = UnitCheck.refusal(of: try live.peerCredentials().process, at: live, for: "app.service")
    #expect(liveRefusal != .exited, "\(String(describing: liveRefusal))")
    close(input.write)
    _ = waiting.wait()
    let gone = try runProcess(
      SecretStorageSuiteTests.python, ["-c", connectScript, path], environment: environment, in: directory)
    try #require(gone.status == 0, "\(gone.stderrText)")
    let connection = try listening.accept()
    defer { connection.descriptor.close() }
    let refusal = UnitCheck.refusal(of: try connection.peerCredentials().process, at: connection, for: "app.service")
    #expect(refusal == .exited)
  }
}
