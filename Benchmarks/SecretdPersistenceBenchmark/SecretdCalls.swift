// The call the benchmark makes besides libsecret's: unlocking secretd's persistent collection
// over GDBus, as `secretctl unlock --password-stdin` does.
import CLibSecret
import ProviderBenchmarkSupport
import SecretTestSupport

/// A GDBus connection of its own to one secretd, for unlocking its persistent collection `login`.
final class PersistentCollectionCalls {
  let connection: OpaquePointer
  let busName: String

  init(_ instance: ProviderInstance) throws {
    connection = try connect(instance.busAddress)
    busName = instance.busName
  }

  deinit { g_object_unref(UnsafeMutableRawPointer(connection)) }

  /// io.github.swiftsecrets.Secretd1.UnlockWithPassphrase: derives the key (Argon2id), unseals
  /// every record and loads the items; the first call makes the key.
  func unlock(passphrase: String) throws {
    let bytes = passphrase.utf8.map(String.init).joined(separator: ", ")
    try call("io.github.swiftsecrets.Secretd1", "UnlockWithPassphrase", "(@ay [\(bytes)],)")
  }

  /// Calls `method` on the service object with arguments in GVariant's text format.
  private func call(_ interface: String, _ method: String, _ arguments: String) throws {
    var error: UnsafeMutablePointer<GError>?
    guard let parameters = g_variant_parse(nil, arguments, nil, nil, &error) else {
      throw BenchmarkError("\(method) arguments \(arguments): \(message(error))")
    }
    guard
      let reply = g_dbus_connection_call_sync(
        connection, busName, "/org/freedesktop/secrets", interface, method, parameters, nil,
        G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
    else { throw BenchmarkError("\(interface).\(method): \(message(error))") }
    g_variant_unref(reply)
  }
}
