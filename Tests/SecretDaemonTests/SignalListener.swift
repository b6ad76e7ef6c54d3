// A client that listens to secretd's signals as python's jeepney receives them: it makes one
// call first (as every real client does before it subscribes), then adds a match rule for
// everything secretd sends, and reports what it heard when asked.
import Foundation
import SecretTestSupport
import Testing

/// A jeepney listener in a process of its own, as the test runner or as another user.
final class SignalListener {
  private let process: ChildProcess
  private let input: Int32
  private let output: URL

  /// The listener's script: reports "ready SERVED" once subscribed, then for each line on its
  /// stdin waits (one bus round trip at a time, at most 500) until a signal it heard contains
  /// that text, or makes one round trip for an empty line, and prints every signal heard so far
  /// as JSON. A round trip to the bus driver orders everything sent to it before that moment.
  static let script = """
    import json, sys
    from jeepney import DBusAddress, MatchRule, MessageType, HeaderFields, message_bus, new_method_call
    from jeepney.io.blocking import open_dbus_connection
    from jeepney.wrappers import unwrap_msg
    connection = open_dbus_connection(bus='SESSION')
    peer = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets',
                       interface='org.freedesktop.DBus.Peer')
    served = connection.send_and_get_reply(new_method_call(peer, 'Ping')).header.message_type != MessageType.error
    rule = MatchRule(type='signal', sender='org.freedesktop.secrets')
    heard = []
    # jeepney's own filter compares the sender as given: the bus's rule names secretd, this one
    # takes every signal that reaches the connection.
    with connection.filter(MatchRule(type='signal'), bufsize=100000) as queue:
        unwrap_msg(connection.send_and_get_reply(message_bus.AddMatch(rule)))
        print('ready', served, flush=True)
        for line in sys.stdin:
            wanted = line.rstrip('\\n')
            for _ in range(500):
                unwrap_msg(connection.send_and_get_reply(message_bus.GetId()))
                while queue:
                    message = queue.popleft()
                    fields = message.header.fields
                    heard.append('%s %s.%s %r' % (fields[HeaderFields.path], fields[HeaderFields.interface],
                                                  fields[HeaderFields.member], message.body))
                if not wanted or any(wanted in signal for signal in heard):
                    break
            print(json.dumps(heard), flush=True)
    """

  /// Starts the listener on `bus` with `environment`, run through `prefix` (such as `setpriv`
  /// to run it as another user), and waits until it has subscribed.
  init(in folder: URL, prefix: [String] = [], environment: [String: String]) async throws {
    let script = folder.appending(path: "listener-\(UUID().uuidString).py")
    try Self.script.write(to: script, atomically: true, encoding: .utf8)
    chmod(script.path, 0o644)
    output = folder.appending(path: "listener-\(UUID().uuidString).out")
    let file = open(output.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    fchmod(file, 0o666)
    let pipe = try ChildProcess.makePipe()
    defer { [file, null, pipe.read].forEach { close($0) } }
    let command = prefix + [SecretStorageSuiteTests.python, script.path]
    process = try ChildProcess(
      try resolveExecutable(command[0]), Array(command.dropFirst()), environment: environment, stdin: pipe.read,
      stdout: file, stderr: null)
    input = pipe.write
    let output = output
    try await eventually("the listener to subscribe") {
      ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("ready")
    }
  }

  deinit {
    close(input)
    process.signal(SIGTERM)
    process.wait()
  }

  /// Whether secretd served the listener's first call.
  var wasServed: Bool { lines.first == "ready True" }

  /// Every signal heard so far (after waiting until one contains `text`, when given).
  func heard(waitingFor text: String = "") async throws -> [String] {
    let before = lines.count
    _ = "\(text)\n".withCString { write(input, $0, strlen($0)) }
    let output = output
    try await eventually("the listener to answer", seconds: 30) {
      ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").count > before
    }
    let answer = try #require(lines.last)
    return try JSONDecoder().decode([String].self, from: Data(answer.utf8))
  }

  private var lines: [String] {
    ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }
}
