// org.freedesktop.Secret.Session at /org/freedesktop/secrets/session/sN.

struct SessionObject {
  let daemon: Daemon
  let number: Int
  let path: String

  // MARK: Members on the bus

  func call(_ method: String, sender: String) throws(DBusError) -> DBusValue {
    switch method {
    case "Close": return try close(sender: sender)
    default: throw .unknownMethod(Interfaces.session, method, path)
    }
  }

  /// Close(): only the owning connection may close it; the key is wiped.
  private func close(sender: String) throws(DBusError) -> DBusValue {
    do throws(SessionError) { _ = try daemon.sessions.session(at: path, caller: sender) } catch {
      throw DBusError(error)
    }
    daemon.sessions.close(number)
    return .tuple([])
  }
}
