import Foundation
import SecretTestSupport
import Testing

/// The method calls a provider receives (not those to the bus daemon), read with `dbus-monitor
/// --profile`: the member of each call, in order. A marker call to the bus (`GetId`) that the
/// monitor has logged says that every call before it is in.
final class BusCallLog: Sendable {
  private let monitor: ChildProcess
  private let log: URL
  private let instance: ProviderInstance

  init(_ instance: ProviderInstance) async throws {
    self.instance = instance
    log = instance.bus.directory.appending(path: "calls-\(UUID().uuidString)")
    let file = open(log.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { [file, null].forEach { close($0) } }
    monitor = try ChildProcess(
      try resolveExecutable("dbus-monitor"), ["--address", instance.busAddress, "--profile", "type='method_call'"],
      environment: instance.environment, stdin: null, stdout: file, stderr: null)
    try await marker()
  }

  deinit {
    monitor.signal(SIGKILL)
    monitor.wait()
  }

  /// The members of the calls to the provider that `body` made, in order.
  func calls(during body: () async throws -> Void) async throws -> [String] {
    try await marker()
    let before = logged().count
    try await body()
    try await marker()
    return logged().dropFirst(before).filter { $0.destination != "org.freedesktop.DBus" }.map(\.member)
  }

  /// Every call logged so far.
  private func logged() -> [(destination: String, member: String)] {
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { line in
      // mc, time, serial, sender, destination, path, interface, member
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      return fields.count == 8 && fields[0] == "mc" ? (fields[4], fields[7]) : nil
    }
  }

  /// Makes `GetId` calls until the monitor has logged one more (the first calls can come
  /// before dbus-monitor has become a monitor).
  private func marker() async throws {
    let seen = logged().count(where: { $0.member == "GetId" })
    try await withDeadline(seconds: 20, "dbus-monitor to log a marker call") { [self] in
      while logged().count(where: { $0.member == "GetId" }) == seen {
        _ = try instance.run(
          "gdbus",
          [
            "call", "--address", instance.busAddress, "--dest", "org.freedesktop.DBus", "--object-path",
            "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.GetId",
          ])
        try await Task.sleep(for: .milliseconds(50))
      }
    }
  }
}
