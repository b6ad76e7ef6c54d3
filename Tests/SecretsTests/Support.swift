import Foundation
import SecretTestSupport
import Secrets

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
    environment.secretStorage = .secretService(instance.client())
    return try await environment.withValue { try await body(instance, clock) }
  }
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
