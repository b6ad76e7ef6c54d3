// GErrors as Swift errors, for the client and the daemon alike.
package import CGio

/// A failure of GLib, GIO or a D-Bus peer (a `GError`), keeping its domain, code and text.
package struct GLibError: Error, CustomStringConvertible {
  /// The error domain, to compare with a domain's quark function (`g_dbus_error_quark()`, …).
  package let domain: GQuark
  package let code: Int32
  /// What failed, as the caller named it; empty when the caller adds its own context.
  package let operation: String
  /// GLib's text, without GDBus's `GDBus.Error:NAME: ` prefix.
  package let reason: String
  /// The remote D-Bus error name, when the failure was an error reply.
  package let remoteName: String?

  /// Takes ownership of `error` and frees it. Wraps g_dbus_error_get_remote_error,
  /// g_dbus_error_strip_remote_error.
  package init(consuming error: UnsafeMutablePointer<GError>?, operation: String = "") {
    self.operation = operation
    guard let error else {
      (domain, code, reason, remoteName) = (0, 0, "failed without saying why", nil)
      return
    }
    defer { g_error_free(error) }
    (domain, code) = (error.pointee.domain, error.pointee.code)
    if let remote = g_dbus_error_get_remote_error(error) {
      remoteName = String(cString: remote)
      g_free(remote)
      _ = g_dbus_error_strip_remote_error(error)
    } else {
      remoteName = nil
    }
    reason = error.pointee.message.map { String(cString: $0) } ?? ""
  }

  /// The domain's name, such as `g-dbus-error-quark`. Wraps g_quark_to_string.
  package var domainName: String { g_quark_to_string(domain).map { String(cString: $0) } ?? "GLib" }

  /// The operation and the reason.
  package var message: String { operation.isEmpty ? reason : "\(operation): \(reason)" }

  package var description: String { message }
}
