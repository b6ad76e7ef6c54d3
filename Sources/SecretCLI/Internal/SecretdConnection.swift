// secretd's own interface (io.github.swiftsecrets.Secretd1) for the commands SecretClient has no
// call for (`secretctl unlocker`): the only file of SecretCLI that calls GIO. Calls go to the
// unique name of the provider the client found, once the bus has said it runs as this user, so
// a passphrase never reaches a process of another user that took the name.
import CGio
import GLibBridge
import SecretClient

/// A connection to the bus of `client`, calling secretd's interface on the provider it serves.
final class SecretdConnection {
  static let interface = "io.github.swiftsecrets.Secretd1"
  static let path = "/org/freedesktop/secrets"

  private let connection: OpaquePointer
  private let provider: ProviderInfo

  /// Connects to the bus `client` uses and checks who owns its provider's name.
  /// Wraps g_dbus_address_get_for_bus_sync and g_dbus_connection_new_for_address_sync.
  init(client: SecretClient) throws(CLIError) {
    let provider = try service { () throws(SecretError) in try client.provider() }
    guard provider.runsAsCurrentUser else { throw CLIError(SecretError.providerOfAnotherUser(provider)) }
    var error: UnsafeMutablePointer<GError>?
    let address: String
    switch client.bus {
    case .address(let given):
      address = given
    case .session:
      guard let found = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else {
        throw CLIError(SecretError.busUnavailable(reason: GLibError(consuming: error).reason))
      }
      defer { g_free(found) }
      address = String(cString: found)
    }
    let flags = GDBusConnectionFlags(
      rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
        | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
      throw CLIError(SecretError.busUnavailable(reason: GLibError(consuming: error).reason))
    }
    (self.connection, self.provider) = (connection, provider)
  }

  deinit {
    g_dbus_connection_close_sync(connection, nil, nil)
    g_object_unref(UnsafeMutableRawPointer(connection))
  }

  /// Calls `method` of secretd's interface; its reply, checked to be of `replyType`. A refusal
  /// becomes the command line's error: no such object is status 1, bad arguments 2, the rest 3.
  /// Wraps g_dbus_connection_call_sync (at most two minutes: Argon2id or a TPM may be slow).
  func call(_ method: String, _ arguments: DBusValue, replyType: String) throws(CLIError) -> Variant {
    var error: UnsafeMutablePointer<GError>?
    let reply = replyType.withCString { type in
      g_dbus_connection_call_sync(
        connection, provider.uniqueName, Self.path, Self.interface, method, arguments.makeFloating(),
        cgio_variant_type(type), G_DBUS_CALL_FLAGS_NONE, 120_000, nil, &error)
    }
    guard let reply, error == nil else { throw refusal(GLibError(consuming: error)) }
    return Variant(adopting: reply)
  }

  private func refusal(_ error: GLibError) -> CLIError {
    switch error.remoteName {
    case "org.freedesktop.Secret.Error.NoSuchObject":
      .notFound(CLIError.oneLine(error.reason))
    case "org.freedesktop.DBus.Error.InvalidArgs":
      .usage(CLIError.oneLine(error.reason))
    case "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
      "org.freedesktop.DBus.Error.UnknownObject":
      .service(
        "\(provider.busName) is served by \(provider.ownerDescription), which has no unlockers: they belong to "
          + "secretd's persistent collection (secretd --persistent)")
    default:
      .service(CLIError.oneLine(error.reason))
    }
  }
}
