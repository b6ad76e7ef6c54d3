import Foundation

/// A small Secret Service provider (python, jeepney) that offers only `plain` transfer and
/// answers `NotSupported` to a DH session, as some minimal providers do. It keeps its items in
/// memory and implements what a client's get, set and search use. It is started on the given
/// bus and owns `busName` until `stop()`.
public final class PlainOnlyProvider: Sendable {
  public let bus: PrivateBus
  private let process: ChildProcess

  public init(bus: PrivateBus, busName: String = "org.freedesktop.secrets") throws {
    self.bus = bus
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    // Debian's python, which has python3-jeepney (scripts/bootstrap installs it).
    process = try ChildProcess(
      URL(filePath: "/usr/bin/python3"), ["-c", Self.script, bus.address, busName], environment: [:], stdin: null,
      stdout: null, stderr: null)
    let wait = try runProcess(
      "gdbus", ["wait", "--address", bus.address, "--timeout", "20", busName], environment: environmentWithoutBus,
      in: URL(filePath: "/tmp"))
    guard wait.status == 0, process.isRunning else {
      stop()
      throw HarnessError("the plain-only provider did not take \(busName); is python3-jeepney installed?")
    }
  }

  deinit { stop() }

  public func stop() {
    process.signal(SIGTERM)
    process.wait()
  }

  static let script = """
    import sys
    from jeepney import new_method_return, new_error, MessageType, HeaderFields
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    connection = open_dbus_connection(bus=sys.argv[1])
    connection.send_and_get_reply(message_bus.RequestName(sys.argv[2]))
    collection = '/org/freedesktop/secrets/collection/session'
    items = {}  # path: [attributes, label, secret, content type]
    sessions = 0
    while True:
        message = connection.receive()
        if message.header.message_type != MessageType.method_call:
            continue
        fields = message.header.fields
        member, path = fields.get(HeaderFields.member), fields.get(HeaderFields.path)
        def reply(signature, *body):
            connection.send(new_method_return(message, signature, body))
        def fail(name, text):
            connection.send(new_error(message, name, 's', (text,)))
        if member == 'OpenSession':
            if message.body[0] != 'plain':
                fail('org.freedesktop.DBus.Error.NotSupported', 'only plain transfer is offered')
                continue
            sessions += 1
            reply('vo', ('s', ''), '/org/freedesktop/secrets/session/%d' % sessions)
        elif member == 'ReadAlias':
            reply('o', collection if message.body[0] in ('default', 'session') else '/')
        elif member == 'SearchItems':
            wanted = message.body[0]
            reply('aoao', [p for p, i in items.items() if all(i[0].get(k) == v for k, v in wanted.items())], [])
        elif member == 'CreateItem':
            properties, secret, replace = message.body
            attributes = properties['org.freedesktop.Secret.Item.Attributes'][1]
            label = properties.get('org.freedesktop.Secret.Item.Label', ('s', ''))[1]
            same = [p for p, i in items.items() if i[0] == attributes] if replace else []
            target = same[0] if same else '%s/%d' % (collection, len(items) + 1)
            items[target] = [attributes, label, bytes(secret[2]), secret[3]]
            reply('oo', target, '/')
        elif member == 'GetSecrets':
            paths, session = message.body
            reply('a{o(oayays)}', {p: (session, b'', items[p][2], items[p][3]) for p in paths if p in items})
        elif member in ('Get', 'GetAll') and path in items:
            attributes, label = items[path][0], items[path][1]
            properties = {'Attributes': ('a{ss}', attributes), 'Label': ('s', label), 'Locked': ('b', False),
                          'Created': ('t', 0), 'Modified': ('t', 0)}
            if member == 'GetAll':
                reply('a{sv}', properties)
            elif message.body[1] in properties:
                reply('v', properties[message.body[1]])
            else:
                fail('org.freedesktop.DBus.Error.InvalidArgs', message.body[1])
        elif member == 'Delete' and path in items:
            del items[path]
            reply('o', '/')
        else:
            fail('org.freedesktop.DBus.Error.UnknownMethod', '%s is not offered here' % member)
    """
}
