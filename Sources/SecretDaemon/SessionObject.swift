// org.freedesktop.Secret.Session at /org/freedesktop/secrets/session/sN.
import GLibBridge

struct SessionObject: BusObject {
  let daemon: Daemon
  let number: Int

  init(daemon: Daemon, node: ObjectNode) throws(DBusError) {
    guard case .session(let number) = node else { throw .noObject(ObjectPaths.canonical(node)) }
    self.daemon = daemon
    self.number = number
  }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<SessionObject>(
    Interfaces.session,
    methods: [
      Method("Close", access: .none) { session, context in try session.close(caller: context.sender) }
    ])

  /// Close(): only the owning connection may close it; the key is wiped.
  private func close(caller: String) throws -> DBusValue {
    try daemon.sessions.close(number, caller: caller)
    return .tuple([])
  }
}
