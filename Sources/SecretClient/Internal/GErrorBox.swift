import CLibSecret

/// Takes ownership of a `GError` and converts it into `SecretError`: the one place where GLib,
/// GDBus and libsecret error domains meet the Swift error type.
struct GErrorBox: ~Copyable {
  private let error: UnsafeMutablePointer<GError>?

  init(_ error: UnsafeMutablePointer<GError>?) {
    self.error = error
  }

  deinit {
    if let error { g_error_free(error) }
  }

  /// The D-Bus error name when the error came from the bus or the provider.
  var remoteName: String? {
    guard let error, let name = g_dbus_error_get_remote_error(error) else { return nil }
    return takeString(name)
  }

  /// The message without GDBus's `GDBus.Error:NAME: ` prefix.
  var message: String {
    guard let error, let text = error.pointee.message else { return "the call failed without saying why" }
    let message = String(cString: text)
    guard message.hasPrefix("GDBus.Error:") else { return message }
    // The error name has no spaces, so the first ": " ends it. (Found by hand: `firstRange(of:)`
    // or `range(of:)` would link _StringProcessing or Foundation into every client program.)
    var rest = message[...]
    while let colon = rest.firstIndex(of: ":") {
      rest = rest[rest.index(after: colon)...]
      if rest.first == " " { return String(rest.dropFirst()) }
    }
    return message
  }

  func secretError(busName: String, object: String? = nil) -> SecretError {
    guard let error else { return .dbus(name: "org.freedesktop.DBus.Error.Failed", message: message) }
    let domain = error.pointee.domain
    let code = error.pointee.code
    let name = remoteName
    let object = object ?? "the requested object"
    if domain == secret_error_get_quark() {
      switch code {
      case Int32(SECRET_ERROR_IS_LOCKED.rawValue): return .locked(path: object)
      case Int32(SECRET_ERROR_NO_SUCH_OBJECT.rawValue): return .noSuchObject(path: object)
      default: break
      }
    }
    if domain == g_dbus_error_quark() {
      switch code {
      case Int32(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue), Int32(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue):
        return .serviceUnavailable(busName: busName)
      case Int32(G_DBUS_ERROR_DISCONNECTED.rawValue), Int32(G_DBUS_ERROR_NO_SERVER.rawValue):
        return .busUnavailable(reason: message)
      case Int32(G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue):
        return .noSuchObject(path: object)
      case Int32(G_DBUS_ERROR_INVALID_ARGS.rawValue):
        return .invalidArgument(message)
      default: break
      }
    }
    if domain == g_io_error_quark() {
      switch code {
      case Int32(G_IO_ERROR_CLOSED.rawValue): return .busUnavailable(reason: message)
      case Int32(G_IO_ERROR_CANCELLED.rawValue): return .promptDismissed
      default: break
      }
    }
    let domainName = g_quark_to_string(domain).map { String(cString: $0) } ?? "GLib"
    return .dbus(name: name ?? "\(domainName) \(code)", message: message)
  }
}
