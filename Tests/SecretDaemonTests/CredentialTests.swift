// systemd credentials from secretd, asked the way the service manager asks for a unit with
// `LoadCredential=ID:%t/secretd/credentials`: a connection from an abstract address naming the
// unit and the credential, made by a process in that unit's control group. (A real user manager
// does this in scripts/check-unit-in-container.)
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

/// Asks secretd for credentials as the service manager does, from a control group of a unit's
/// name (made under this test's own, and removed at the end).
struct CredentialAsker {
  let instance: ProviderInstance
  let cgroup: URL

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

  init(_ instance: ProviderInstance, unit: String) throws {
    self.instance = instance
    let hierarchy = try #require(Self.hierarchy, "no cgroup2 tree mounted")
    cgroup = hierarchy.appending(path: unit)
    try FileManager.default.createDirectory(at: cgroup, withIntermediateDirectories: true)
  }

  func remove() { rmdir(cgroup.path) }

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
      let app = try CredentialAsker(instance, unit: "secretd-test-\(UUID().uuidString.prefix(8))/app.service")
      defer { app.remove() }
      let worker = try CredentialAsker(instance, unit: "secretd-test-\(UUID().uuidString.prefix(8))/worker.service")
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
      let outsider = try CredentialAsker(instance, unit: "secretd-test-\(UUID().uuidString.prefix(8))/outsider.service")
      defer { outsider.remove() }
      // Positive control: its own unit gets it.
      #expect(try outsider.ask(for: "outsider.service", "api-token") == Array("shared-token".utf8))
      #expect(try outsider.ask(for: "app.service", "api-token").isEmpty)
      #expect(Self.log(instance).contains("credential api-token for app.service: pid"), "\(Self.log(instance))")
    }
  }

  @Test(
    "a credential in a locked collection is not given, and the log says it is locked",
    .needsRoot("a control group of a unit's name is made under the test's own"))
  func aLockedCollectionGivesNothing() async throws {
    try await withProvider(.secretd) { instance in
      try Self.secretctl(instance, ["credential", "set", "api-token"], input: "shared-token")
      let app = try CredentialAsker(instance, unit: "secretd-test-\(UUID().uuidString.prefix(8))/app.service")
      defer { app.remove() }
      #expect(try app.ask(for: "app.service", "api-token") == Array("shared-token".utf8))
      try Self.secretctl(instance, ["lock"], input: "")
      #expect(try app.ask(for: "app.service", "api-token").isEmpty)
      #expect(
        Self.log(instance).contains("credential api-token for app.service: the collection"), "\(Self.log(instance))")
    }
  }
}
