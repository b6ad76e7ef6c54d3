// Property changes as a client that caches properties sees them: GLib's own `gdbus monitor`.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("signals")
struct SignalTests {
  @Test("PropertiesChanged: a relabelled item announces its new label, a new item invalidates its collection's Items")
  func propertiesChanged() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let output = instance.bus.directory.appending(path: "monitor-\(UUID().uuidString)")
      let file = open(output.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
      let null = open("/dev/null", O_RDWR | O_CLOEXEC)
      defer { [file, null].forEach { close($0) } }
      let monitor = try ChildProcess(
        try resolveExecutable("gdbus"),
        ["monitor", "--address", instance.busAddress, "--dest", "org.freedesktop.secrets"],
        environment: environmentWithoutBus, stdin: null, stdout: file, stderr: null)
      defer {
        monitor.signal(SIGTERM)
        monitor.wait()
      }
      @Sendable func monitored() -> String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      // Items are created until the monitor reports one: from then on it hears every signal.
      try await withDeadline(seconds: 20, "gdbus monitor hearing ItemCreated") {
        var created = 0
        while !monitored().contains("ItemCreated") {
          created += 1
          try client.createPlainItem(session: session, attributes: ["warm-up": "\(created)"], secret: [1])
          try await Task.sleep(for: .milliseconds(50))
        }
      }
      let item = try client.createPlainItem(session: session, attributes: ["relabel": "me"], secret: [2])
      try client.call(
        item, Interfaces.properties, "Set",
        .tuple([.string(Interfaces.item), .string("Label"), .variant(.string("renamed"))]))
      let itemChange = "\(item): org.freedesktop.DBus.Properties.PropertiesChanged ('org.freedesktop.Secret.Item', {"
      try await withDeadline(seconds: 10, "PropertiesChanged with the new label") {
        while !monitored().split(separator: "\n").contains(where: {
          $0.hasPrefix(itemChange) && $0.contains("'Label': <'renamed'>")
        }) {
          try await Task.sleep(for: .milliseconds(20))
        }
      }
      #expect(
        monitored().contains(
          "org.freedesktop.DBus.Properties.PropertiesChanged ('org.freedesktop.Secret.Collection', @a{sv} {}, ['Items'])"
        ),
        "\(monitored())")
    }
  }
}
