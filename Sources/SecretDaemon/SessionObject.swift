// org.freedesktop.Secret.Session at /org/freedesktop/secrets/session/sN.
import GLibBridge

struct SessionObject: BusObject {
  let daemon: Daemon
  let path: String

  init(daemon: Daemon, node: ObjectNode) {
    self.daemon = daemon
    self.path = ObjectPaths.canonical(node)
  }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<SessionObject>(
    Interfaces.session,
    methods: [
      Method("Close", access: .none) { session, _, context throws(DBusError) in
        try session.close(caller: context.sender)
      }
    ])

  /// Close(): only the owning connection may close it; the key is wiped.
  private func close(caller: String) throws(DBusError) -> DBusValue {
    do throws(SessionError) { try daemon.sessions.close(path, caller: caller) } catch { throw DBusError(error) }
    return .tuple([])
  }
}
