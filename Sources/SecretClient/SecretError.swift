/// What went wrong when talking to the Secret Service, with a message that says what to do.
///
/// An absent item is never an error: reads return `nil` for it. Messages never contain secret
/// values; they name the bus, the provider or the object involved.
public enum SecretError: Error, Sendable, Hashable {
  /// No D-Bus session bus could be reached (no `DBUS_SESSION_BUS_ADDRESS`, or the bus is gone).
  case busUnavailable(reason: String)
  /// The bus answers, but no Secret Service provider owns `busName` on it.
  case serviceUnavailable(busName: String)
  /// The collection holding the item is locked.
  case locked(path: String)
  /// The provider needed a prompt and it was dismissed, or could not be shown.
  case promptDismissed
  /// The request itself is malformed: empty attributes, a NUL byte in a name or value, ….
  case invalidArgument(String)
  /// The object (collection or item) does not exist.
  case noSuchObject(path: String)
  /// Any other D-Bus error, by its name and message.
  case dbus(name: String, message: String)
  /// The provider's bus name is owned by a process of another Unix user (or one whose user the
  /// bus does not tell): nothing was sent to it or accepted from it.
  case providerOfAnotherUser(ProviderInfo)
  /// The provider offers only `plain` transfer, in which secrets cross the bus unencrypted, and
  /// the client was not created with `allowsPlainTransfer`: nothing was sent or read.
  case plainTransferRefused(busName: String)
}

extension SecretError: CustomStringConvertible {
  /// What went wrong and what to do about it; never a secret value.
  public var description: String {
    switch self {
    case .busUnavailable(let reason):
      "No D-Bus session bus: \(reason). Log in to a desktop session; on a machine without one, "
        + "`eval \"$(secretd --agent)\"` starts a bus and secretd for the shell, and "
        + "`secretd run -- COMMAND` for one command."
    case .serviceUnavailable(let busName):
      "No Secret Service provider owns \(busName) on the session bus. Start one: "
        + "`secretd` (or `systemctl --user start secretd`), or gnome-keyring."
    case .locked(let path):
      "The collection \(path) is locked. Unlock it (`secretctl unlock`) and try again."
    case .promptDismissed:
      "The Secret Service asked for confirmation and the prompt was dismissed or could not be "
        + "shown. Unlock the keyring from a desktop session, or use secretd, which never prompts."
    case .invalidArgument(let detail):
      "Invalid argument: \(detail)."
    case .noSuchObject("alias default"):
      "The Secret Service provider has no default collection (gnome-keyring has none until a login "
        + "keyring exists). Use the session collection (`.session`), or create the login keyring by "
        + "logging in to a desktop session or with `gnome-keyring-daemon --unlock`."
    case .noSuchObject(let path):
      "No such object on the Secret Service: \(path). Check the collection name or alias."
    case .dbus(let name, let message):
      "The Secret Service failed with \(name): \(message)"
    case .providerOfAnotherUser(let provider):
      "\(provider.busName) is owned by \(provider.ownerDescription), which runs as "
        + (provider.uid.map { "uid \($0)" } ?? "a user the bus does not tell")
        + ", not as you (uid \(ProviderInfo.currentUser)): no secret was sent to it or read from it. "
        + "Find out who started it (`ps -o user,pid,args -p PID`), stop it, and start your own provider."
    case .plainTransferRefused(let busName):
      "The provider of \(busName) offers only plain transfer, which sends secrets unencrypted over the bus: "
        + "nothing was sent or read. Use a provider that supports dh-ietf1024-sha256-aes128-cbc-pkcs7, or, "
        + "trusting every process that can watch this bus, allow plain transfer explicitly."
    }
  }
}
