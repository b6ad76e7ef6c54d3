// Clients that send file descriptors with their calls. D-Bus lets any method call carry them;
// secretd's methods take none, and a flood of them once filled its descriptor table until GLib
// aborted (issue 37). secretd now refuses descriptor passing when it connects, so the bus
// answers such a call itself and secretd never holds one.
import Foundation
import SecretTestSupport
import Testing

@Suite("descriptor flood")
struct DescriptorFloodTests {
  /// 8 connections, each sending 256 calls to secretd that carry 16 descriptors, before reading
  /// any reply; prints who answered them with what, as `SENDER ANSWER COUNT` lines.
  static let flood = """
    import os, sys, collections
    from jeepney import new_method_call, DBusAddress, HeaderFields, MessageType
    from jeepney.io.blocking import open_dbus_connection
    name = sys.argv[1]
    peer = DBusAddress('/org/freedesktop/secrets', bus_name=name, interface='org.freedesktop.DBus.Peer')
    null = os.open('/dev/null', os.O_RDONLY)
    connections = [open_dbus_connection(enable_fds=True) for _ in range(8)]
    for connection in connections:
        for _ in range(256):
            connection.send(new_method_call(peer, 'Ping', 'h' * 16, (null,) * 16))
    answers = collections.Counter()
    for connection in connections:
        answered = 0
        while answered < 256:
            reply = connection.receive()
            kind = reply.header.message_type
            if kind not in (MessageType.error, MessageType.method_return):
                continue
            answered += 1
            fields = reply.header.fields
            sender = 'bus' if fields[HeaderFields.sender] == 'org.freedesktop.DBus' else 'secretd'
            answers[(sender, fields.get(HeaderFields.error_name, 'method-return'))] += 1
    for (sender, answer), count in sorted(answers.items()):
        print(sender, answer, count)
    """

  @Test("calls that carry descriptors are refused by the bus, never reach secretd, and secretd keeps serving")
  func aDescriptorFloodLeavesSecretdServing() async throws {
    try await withProvider(.secretd) { instance in
      let stored = try instance.run(
        "secret-tool", ["store", "--label=kept", "service", "flood"], input: Array("still here".utf8))
      try #require(stored.status == 0, "\(stored.stderrText)")
      let flooded = try instance.run(SecretStorageSuiteTests.python, ["-c", Self.flood, instance.busName])
      try #require(flooded.status == 0, "\(flooded.stderrText)")
      // Every call was answered by the bus (NotSupported, or LimitsExceeded for the descriptors
      // it holds in flight per connection); secretd answers Ping's 16 handles with InvalidArgs.
      let answers = flooded.stdoutText.split(separator: "\n")
      #expect(answers.allSatisfy { $0.hasPrefix("bus ") }, "\(flooded.stdoutText)")
      #expect(
        answers.contains { $0.hasPrefix("bus org.freedesktop.DBus.Error.NotSupported ") }, "\(flooded.stdoutText)")
      #expect(kill(instance.pid, 0) == 0, "secretd died")
      let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(instance.pid)/fd")
      #expect(descriptors.count < 64, "secretd holds \(descriptors.count) descriptors")
      let lookup = try instance.run("secret-tool", ["lookup", "service", "flood"])
      #expect(lookup.stdoutText == "still here")
    }
  }
}
