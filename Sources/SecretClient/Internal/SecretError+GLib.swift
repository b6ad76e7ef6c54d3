// The one place where GLib, GDBus and libsecret error domains meet SecretError.
import CLibSecret
import GLibBridge

extension SecretError {
  /// What `error` means for a call to `busName` about `object`.
  init(_ error: GLibError, busName: String, object: String? = nil) {
    let object = object ?? "the requested object"
    let message = error.reason
    switch (error.domain, error.code) {
    case (0, _):
      self = .dbus(name: "org.freedesktop.DBus.Error.Failed", message: message)
    case (secret_error_get_quark(), Int32(SECRET_ERROR_IS_LOCKED.rawValue)):
      self = .locked(path: object)
    case (secret_error_get_quark(), Int32(SECRET_ERROR_NO_SUCH_OBJECT.rawValue)),
      (g_dbus_error_quark(), Int32(G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue)):
      self = .noSuchObject(path: object)
    case (g_dbus_error_quark(), Int32(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue)),
      (g_dbus_error_quark(), Int32(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue)):
      self = .serviceUnavailable(busName: busName)
    case (g_dbus_error_quark(), Int32(G_DBUS_ERROR_DISCONNECTED.rawValue)),
      (g_dbus_error_quark(), Int32(G_DBUS_ERROR_NO_SERVER.rawValue)),
      (g_io_error_quark(), Int32(G_IO_ERROR_CLOSED.rawValue)):
      self = .busUnavailable(reason: message)
    case (g_dbus_error_quark(), Int32(G_DBUS_ERROR_INVALID_ARGS.rawValue)):
      self = .invalidArgument(message)
    case (g_io_error_quark(), Int32(G_IO_ERROR_CANCELLED.rawValue)):
      self = .promptDismissed
    default:
      self = .dbus(name: error.remoteName ?? "\(error.domainName) \(error.code)", message: message)
    }
  }
}
