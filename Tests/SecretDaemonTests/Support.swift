// Helpers: a raw GDBus client of the daemon (through SecretDaemon's own wrappers), secret-tool,
// and /proc reads.
import Foundation
import GLibBridge
import SecretMemory
import SecretTestSupport
import Testing
import TransferCrypto

@testable import SecretDaemon

/// A client connection that speaks the Secret Service API directly, for calls libsecret never makes.
final class RawClient: Sendable {
  let connection: BusConnection
  let destination: String

  init(address: String, destination: String = "org.freedesktop.secrets") throws {
    connection = try BusConnection(address: address)
    self.destination = destination
  }

  @discardableResult
  func call(_ path: String, _ interface: String, _ method: String, _ arguments: DBusValue) throws(GLibError) -> Variant
  {
    try connection.call(
      destination: destination, path: path, interface: interface, method: method, arguments: arguments)
  }

  /// The D-Bus error name a call fails with; nil if it succeeds.
  func errorName(_ path: String, _ interface: String, _ method: String, _ arguments: DBusValue) -> String? {
    do {
      try call(path, interface, method, arguments)
      return nil
    } catch {
      return error.remoteName ?? "local: \(error.message)"
    }
  }

  func openPlainSession() throws -> String {
    let reply = try call(
      ObjectPaths.root, Interfaces.service, "OpenSession", .tuple([.string("plain"), .variant(.string(""))]))
    return try #require(reply.child(1)?.string)
  }

  /// Opens a DH session; returns its path and the AES key.
  func openDHSession() throws -> (path: String, key: SecretBytes) {
    let pair = try DiffieHellman.makeKeyPair()
    let reply = try call(
      ObjectPaths.root, Interfaces.service, "OpenSession",
      .tuple([.string(TransferSession.Algorithm.dh.rawValue), .variant(.bytes(pair.publicKey))]))
    let serverKey = try #require(reply.child(0)?.unboxed?.publicBytes)
    let key = try serverKey.withUnsafeBytes { try KeyAgreement.deriveKey(pair, peerKey: $0) }
    return (try #require(reply.child(1)?.string), key)
  }

  static func itemProperties(label: String, attributes: [String: String]) -> DBusValue {
    .array(
      elementType: "{sv}",
      [
        .dictEntry(.string("org.freedesktop.Secret.Item.Label"), .variant(.string(label))),
        .dictEntry(.string("org.freedesktop.Secret.Item.Attributes"), .variant(.stringDictionary(attributes))),
      ])
  }

  /// Stores a secret through a plain session; returns the item path.
  @discardableResult
  func createPlainItem(
    session: String, collection: String = "/org/freedesktop/secrets/aliases/default", label: String = "item",
    attributes: [String: String], secret: [UInt8], replace: Bool = true
  ) throws(GLibError) -> String {
    let reply = try call(
      collection, Interfaces.collection, "CreateItem",
      .tuple([
        Self.itemProperties(label: label, attributes: attributes),
        .tuple([.objectPath(session), .bytes([]), .bytes(secret), .string("text/plain")]), .boolean(replace),
      ]))
    return reply.child(0)?.string ?? ""
  }

  func search(_ attributes: [String: String]) throws -> [String] {
    let reply = try call(ObjectPaths.root, Interfaces.service, "SearchItems", .tuple([.stringDictionary(attributes)]))
    return (reply.child(0)?.objectPaths ?? []) + (reply.child(1)?.objectPaths ?? [])
  }

  /// The secret of `item` through a plain session.
  func plainSecret(_ item: String, session: String) throws -> [UInt8] {
    let reply = try call(item, Interfaces.item, "GetSecret", .tuple([.objectPath(session)]))
    return try #require(reply.child(0)?.child(2)?.publicBytes)
  }
}

extension ProviderInstance {
  func secretTool(_ arguments: [String], input: String? = nil) throws -> ProcessOutput {
    try run("secret-tool", arguments, input: input.map { Array($0.utf8) })
  }
}

/// A store in an arena of its own, as secretd keeps one, small enough by default that many tests
/// hold one at once (tests may use memory that cannot be locked).
func makeStore(
  limits: Limits = Limits(maxMemory: 1 << 20), clock: any ExpiryClock = SystemExpiryClock(), defaultTTL: UInt64? = nil
) throws -> Store {
  let configuration = Configuration(limits: limits, defaultTTL: defaultTTL, allowUnlockedMemory: true)
  return try StoreKeeper.fresh(configuration: configuration, clock: clock)
}

/// A secret as a client sends it over a plain session.
func sent(_ bytes: [UInt8]) -> SecretSource {
  .sent(maximumCount: bytes.count) { destination in
    destination.copyBytes(from: bytes)
    return bytes.count
  }
}

func sent(_ text: String) -> SecretSource { sent(Array(text.utf8)) }

/// `bytes` in locked memory, as the daemon keeps keys.
func secretBytes(_ bytes: [UInt8]) throws -> SecretBytes {
  try #require(bytes.withUnsafeBytes { SecretBytes(lockedCopying: $0) })
}

/// A random lowercase token, unique enough to search memory for.
func randomToken(_ length: Int = 40) -> String {
  let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
  return String((0..<length).map { _ in letters.randomElement()! })
}

/// The secretd binary built beside the tests.
func secretdPath() -> String {
  if let given = ProcessInfo.processInfo.environment["SECRETD"] { return given }
  let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
  return URL(filePath: me).deletingLastPathComponent().appending(path: "secretd").path
}

/// A second secretd on a test's bus, started with the harness's `ChildProcess` (every signal
/// unblocked), its standard error kept in a file for the test to read.
struct ExtraSecretd {
  let process: ChildProcess
  let log: URL

  /// Sends SIGTERM and returns the exit status.
  @discardableResult
  func stop() -> Int32 {
    process.signal(SIGTERM)
    return process.wait()
  }

  var stderrText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
}

/// Starts an extra secretd on `instance`'s bus under `busName`, once it owns that name.
func startSecretd(on instance: ProviderInstance, busName: String, _ extra: [String]) throws -> ExtraSecretd {
  let log = instance.bus.directory.appending(path: "secretd-\(busName).log")
  let file = open(log.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
  let null = open("/dev/null", O_RDWR | O_CLOEXEC)
  defer { [file, null].forEach { close($0) } }
  let process = try ChildProcess(
    URL(filePath: secretdPath()), ["--address", instance.busAddress, "--bus-name", busName] + extra,
    environment: instance.environment, stdin: null, stdout: null, stderr: file)
  let extraSecretd = ExtraSecretd(process: process, log: log)
  let wait = try runProcess(
    "gdbus", ["wait", "--address", instance.busAddress, "--timeout", "20", busName], input: nil,
    environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
  guard wait.status == 0 else {
    extraSecretd.stop()
    throw HarnessError("secretd did not take \(busName): \(extraSecretd.stderrText)")
  }
  return extraSecretd
}

/// A secretd of a test's own, on a bus of its own that every user may join, run as `user`
/// (the test runner when nil) with `lockedMemory` bytes of RLIMIT_MEMLOCK (as inherited when nil).
/// Clients run as any user through ``run(_:_:as:input:)``. Its log outlives the bus.
final class StandaloneSecretd {
  static let nobody: UInt32 = 65534
  let bus: PrivateBus
  let process: ChildProcess
  /// The copy of secretd and its log, readable by every user.
  let folder: URL
  var log: URL { folder.appending(path: "secretd.log") }

  /// Runs `command` with memfd_secret(2) refused (EPERM), as a unit's system-call filter that
  /// does not list it refuses it: python's binding of libseccomp, then exec.
  static let withoutSecretMemory = [
    "/usr/bin/python3", "-c",
    """
    import os, sys, seccomp
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.add_rule(seccomp.ERRNO(1), 'memfd_secret')
    rules.load()
    os.execv(sys.argv[1], sys.argv[1:])
    """,
  ]

  /// - Parameter secretMemory: false runs secretd where memfd_secret is refused, so that its
  ///   store is a locked memfd, which root can read through /proc/PID/mem.
  init(_ arguments: [String] = [], user: UInt32? = nil, lockedMemory: Int? = nil, secretMemory: Bool = true) throws {
    bus = try PrivateBus(everyUser: true)
    folder = try makeTemporaryDirectory()
    chmod(folder.path, 0o755)
    // A copy the other user can run, made by `cp` (see MemoryHygieneTests).
    let secretd = folder.appending(path: "secretd").path
    let copy = try runProcess(
      "cp", [secretdPath(), secretd], environment: environmentWithoutBus, in: folder)
    guard copy.status == 0 else { throw HarnessError("cannot copy secretd: \(copy.stderrText)") }
    var command = [secretd, "--address", bus.address] + arguments
    if !secretMemory { command = Self.withoutSecretMemory + command }
    if let user { command = ["setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups"] + command }
    if let lockedMemory { command = ["prlimit", "--memlock=\(lockedMemory):\(lockedMemory)", "--"] + command }
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    let logFile = open(folder.appending(path: "secretd.log").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
    defer { [null, logFile].forEach { close($0) } }
    process = try ChildProcess(
      try resolveExecutable(command[0]), Array(command.dropFirst()),
      environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"],
      stdin: null, stdout: null, stderr: logFile)
    let wait = try runProcess(
      "gdbus", ["wait", "--address", bus.address, "--timeout", "20", "org.freedesktop.secrets"], input: nil,
      environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
    guard wait.status == 0 else {
      stop()
      throw HarnessError("secretd did not start: \(logText) \(wait.stderrText)")
    }
  }

  deinit {
    stop()
    try? FileManager.default.removeItem(at: folder)
  }

  var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

  /// Runs a client program as `user` (the test runner when nil) on this bus.
  func run(_ executable: String, _ arguments: [String], as user: UInt32? = nil, input: String? = nil) throws
    -> ProcessOutput
  {
    var command = [executable] + arguments
    if let user { command = ["setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups"] + command }
    return try runProcess(
      command[0], Array(command.dropFirst()), input: input.map { Array($0.utf8) },
      environment: [
        "DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": "/tmp",
        "LANG": "C.UTF-8",
      ],
      in: folder)
  }

  /// Stops secretd (SIGTERM), then the bus, and returns secretd's exit status; safe to call twice.
  @discardableResult
  func stop() -> Int32 {
    process.signal(SIGTERM)
    let status = process.wait()
    bus.stop()
    return status
  }
}
