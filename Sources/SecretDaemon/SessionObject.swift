// org.freedesktop.Secret.Session at /org/freedesktop/secrets/session/sN.

struct SessionObject {
  let daemon: Daemon
  let path: String

  // MARK: Members on the bus

  func call(_ method: String, context: CallContext) throws(DBusError) -> DBusValue {
    switch method {
    case "Close": return try close(caller: context.sender)
    default: throw .unknownMethod(Interfaces.session, method, path)
    }
  }

  /// Close(): only the owning connection may close it; the key is wiped.
  private func close(caller: String) throws(DBusError) -> DBusValue {
    do throws(SessionError) { try daemon.sessions.close(path, caller: caller) } catch { throw DBusError(error) }
    return .tuple([])
  }
}
