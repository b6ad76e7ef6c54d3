// GErrors as Swift errors; D-Bus error replies by the names clients match on.
import CGio

/// A failure of GIO itself (a `GError`), keeping its domain, code and text.
package struct GLibError: Error, CustomStringConvertible {
  package let domain: String
  package let code: Int
  package let message: String
  /// The remote D-Bus error name, when the failure was an error reply.
  package let remoteName: String?

  /// Takes ownership of `error` and frees it. Wraps g_quark_to_string, g_dbus_error_get_remote_error.
  init(consuming error: UnsafeMutablePointer<GError>?, operation: String) {
    guard let error else {
      self.domain = ""
      self.code = 0
      self.message = "\(operation) failed"
      self.remoteName = nil
      return
    }
    defer { g_error_free(error) }
    self.domain = g_quark_to_string(error.pointee.domain).map { String(cString: $0) } ?? ""
    self.code = Int(error.pointee.code)
    if let remote = g_dbus_error_get_remote_error(error) {
      self.remoteName = String(cString: remote)
      g_free(remote)
      _ = g_dbus_error_strip_remote_error(error)
    } else {
      self.remoteName = nil
    }
    self.message = "\(operation): " + (error.pointee.message.map { String(cString: $0) } ?? "")
  }

  package var description: String { message }
}

/// A D-Bus error reply, by the name clients match on.
struct DBusError: Error, Equatable {
  let name: String
  let message: String
}
