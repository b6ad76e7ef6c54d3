import Foundation
import SecretTestSupport
import Secrets
import Synchronization

struct Token: Codable, Sendable, Equatable {
  var value: String
  var expires: Int
}

/// Runs `body` with a provider on a private bus, every new `SecretKey` on it, and a manual
/// write clock (time moves only when the test advances it).
func withSecretKeys<T: Sendable>(
  _ provider: Provider, _ body: (ProviderInstance, TestWriteClock) async throws -> T
) async throws -> T {
  try await withProvider(provider) { instance in
    let clock = TestWriteClock()
    var environment = SharedEnvironment.test(clock: clock)
    environment.secretKeyStore = .secretService(instance.client())
    return try await environment.withValue { try await body(instance, clock) }
  }
}

/// An item of another store, with hooks a test sets: its reads and writes seen, its change
/// notices replaced.
struct InstrumentedItem: PersistentStore {
  let base: any PersistentStore<[UInt8]>
  /// Called when a read has returned or thrown.
  var afterRead: @Sendable () -> Void = {}
  /// Called as a write begins.
  var beforeWrite: @Sendable () -> Void = {}
  /// Watches instead of the base's, when set.
  var replacedWatch: (@Sendable (@escaping @Sendable () -> Void) -> SharedSubscription?)?

  var description: String { base.description }
  func read() throws -> [UInt8]? {
    defer { afterRead() }
    return try base.read()
  }
  func write(_ bytes: [UInt8]) throws {
    beforeWrite()
    try base.write(bytes)
  }
  func delete() throws { try base.delete() }
  func keepCopy(of bytes: [UInt8], stamp: String) throws { try base.keepCopy(of: bytes, stamp: stamp) }
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    try replacedWatch.map { $0(onChange) } ?? base.watch(onChange)
  }
  var readsBeforeWriting: Bool { base.readsBeforeWriting }
  func readDiscarded() { base.readDiscarded() }
  var isInMemory: Bool { base.isInMemory }
  var writesFirstChangeAtOnce: Bool { base.writesFirstChangeAtOnce }
}

extension SecretKeyStore {
  /// This store's items, each with the hooks `adjust` sets, as the store of `owner`.
  func instrumented(
    owner: some AnyObject & Sendable, _ adjust: @escaping @Sendable (inout InstrumentedItem) -> Void
  ) -> SecretKeyStore {
    SecretKeyStore(owner: owner, search: search) { address in
      var item = InstrumentedItem(base: self.item(at: address))
      adjust(&item)
      return item
    }
  }
}

/// A number of calls, counted from any thread.
final class CallCount: Sendable {
  private let count = Mutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}

extension ProviderInstance {
  /// What `secret-tool lookup service S account A` prints, or `nil` when it finds nothing.
  func lookup(_ service: String, _ account: String) throws -> String? {
    let output = try run("secret-tool", ["lookup", "service", service, "account", account])
    return output.status == 0 ? output.stdoutText : nil
  }

  func store(_ service: String, _ account: String, _ text: String) throws {
    let output = try run(
      "secret-tool", ["store", "--label=test", "service", service, "account", account], input: Array(text.utf8))
    guard output.status == 0 else { throw HarnessError("secret-tool store failed: \(output.stderrText)") }
  }
}

/// Counts the method calls a provider receives, by watching the bus with `dbus-monitor`.
final class CallCounter: Sendable {
  private let monitor: ChildProcess
  private let log: URL
  private let instance: ProviderInstance

  init(_ instance: ProviderInstance, members: [String]) async throws {
    self.instance = instance
    log = instance.bus.directory.appending(path: "monitor-\(UUID().uuidString)")
    let file = open(log.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { [file, null].forEach { close($0) } }
    let rules = (members + ["GetId"]).map { "type='method_call',member='\($0)'" }
    monitor = try ChildProcess(
      try resolveExecutable("dbus-monitor"), ["--address", instance.busAddress, "--profile"] + rules,
      environment: instance.environment, stdin: null, stdout: file, stderr: null)
    try await marker()
  }

  deinit {
    monitor.signal(SIGKILL)
    monitor.wait()
  }

  /// How many of the watched calls were made so far (every earlier call is counted).
  func count(_ member: String) async throws -> Int {
    try await marker()
    return try String(contentsOf: log, encoding: .utf8).split(separator: "\n").filter { $0.hasSuffix("\t\(member)") }
      .count
  }

  /// Makes `GetId` calls until the monitor has logged one: everything before it is in. (The
  /// first calls can come before dbus-monitor has become a monitor, so one is not enough.)
  private func marker() async throws {
    let seen = markers()
    try await withDeadline(seconds: 20, "dbus-monitor to see a marker call") { [self] in
      while markers() == seen {
        _ = try instance.run(
          "gdbus",
          [
            "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
            "org.freedesktop.DBus.GetId",
          ])
        try await Task.sleep(for: .milliseconds(50))
      }
    }
  }

  private func markers() -> Int {
    ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasSuffix("\tGetId") }
      .count
  }
}

/// The session paths a provider hands out, in order, read off the bus with `dbus-monitor`: each
/// `OpenSession` call matched to its reply.
final class OpenedSessions: Sendable {
  private let monitor: ChildProcess
  private let log: URL
  private let instance: ProviderInstance

  init(_ instance: ProviderInstance) async throws {
    self.instance = instance
    log = instance.bus.directory.appending(path: "sessions-\(UUID().uuidString)")
    let file = open(log.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { [file, null].forEach { close($0) } }
    monitor = try ChildProcess(
      try resolveExecutable("dbus-monitor"),
      ["--address", instance.busAddress, "type='method_call',member='OpenSession'", "type='method_return'"],
      environment: instance.environment, stdin: null, stdout: file, stderr: null)
    // The monitor has started watching once it logs the reply to a call made now.
    try await eventually("dbus-monitor to log a reply", seconds: 20) { [self] in
      _ = try instance.run(
        "gdbus",
        [
          "call", "--session", "--dest", instance.busName, "--object-path", "/", "--method",
          "org.freedesktop.DBus.Peer.Ping",
        ])
      return (try? String(contentsOf: log, encoding: .utf8))?.contains("method return") == true
    }
  }

  deinit {
    monitor.signal(SIGKILL)
    monitor.wait()
  }

  /// The paths of every session opened so far, in the order the provider answered.
  func paths(expecting count: Int) async throws -> [String] {
    try await eventually("\(count) OpenSession replies", seconds: 20) { [self] in openedPaths().count >= count }
    return openedPaths()
  }

  private func openedPaths() -> [String] {
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    var calls: Set<String> = []
    var paths: [String] = []
    var awaiting = false
    for line in text.split(separator: "\n") {
      if line.hasPrefix("method call "), line.hasSuffix("member=OpenSession"),
        let sender = field(line, "sender"), let serial = field(line, "serial")
      {
        calls.insert("\(sender) \(serial)")
      } else if line.hasPrefix("method return "), let destination = field(line, "destination"),
        let serial = field(line, "reply_serial")
      {
        awaiting = calls.contains("\(destination) \(serial)")
      } else if awaiting, let start = line.range(of: "object path \"") {
        paths.append(String(line[start.upperBound...].dropLast()))
        awaiting = false
      } else if !line.hasPrefix(" ") {
        awaiting = false
      }
    }
    return paths
  }

  /// `sender=:1.5` → `:1.5`.
  private func field(_ line: Substring, _ name: String) -> String? {
    line.split(separator: " ").first { $0.hasPrefix("\(name)=") }.map { String($0.dropFirst(name.count + 1)) }
  }
}
