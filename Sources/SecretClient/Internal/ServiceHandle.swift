import CLibSecret
import GLibBridge
import Synchronization
import TransferCrypto

/// Owns a D-Bus connection, and the libsecret `SecretService` proxy opened on it for the calls
/// left to libsecret (deletes, aliases, collections, locks, prompts) once one of them is made.
///
/// Every libsecret call of the module goes through the methods of this type (see the
/// `ServiceHandle+*.swift` files); the public API never sees a C pointer.
final class ServiceHandle: @unchecked Sendable {
  static let servicePath = "/org/freedesktop/secrets"
  static let serviceInterface = "org.freedesktop.Secret.Service"
  static let itemInterface = "org.freedesktop.Secret.Item"

  // SAFETY: the connection is set once in init and released only in deinit; the proxy is made
  // once, under its lock, and released only in deinit. GDBusConnection and GDBusProxy (which
  // SecretService is) are documented as thread-safe, and libsecret's `_sync` calls each iterate
  // a main context of their own, so calls from several threads at once are supported.
  let connection: OpaquePointer
  /// The address of the libsecret proxy once made (0 until then): raw pointers are not
  /// Sendable, so it is kept as an integer.
  private let proxyAddress = Mutex<UInt>(0)
  let busName: String
  /// The session secrets are read and written through (ServiceHandle+Transfer.swift), opened on
  /// first use.
  let transfer = Mutex<ProviderSession?>(nil)
  /// Whether a provider that offers only `plain` transfer may be used (secrets then cross the
  /// bus unencrypted).
  let allowsPlainTransfer: Bool
  /// What the bus said about each unique name it was asked about (ServiceHandle+Trust.swift).
  let owners = Mutex<[String: OwnerCredentials]>([:])
  /// What the connection knows of items without asking (ServiceHandle+Mirror.swift).
  let mirror = ItemMirror()
  /// Calls by address made so far; the mirror starts on the second.
  let addressCalls = Mutex(0)
  /// The message filter that feeds the mirror, once installed.
  let mirrorFilter = Mutex<guint?>(nil)

  /// The key pair of the first transfer session, made while the connection is set up; later
  /// sessions make theirs when opened.
  let preparedKeyPair: KeyPairReserve

  /// Connects to `address` and opens the provider's service object with a transfer session.
  init(address: String, busName: String, allowsPlainTransfer: Bool) throws(SecretError) {
    // Before any libsecret call, so that libsecret never sets libgcrypt up at the same time.
    Gcrypt.initialize()
    preparedKeyPair = KeyPairReserve(refilling: false)
    var error: UnsafeMutablePointer<GError>?
    let flags = GDBusConnectionFlags(
      rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
        | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error)
    else {
      throw .busUnavailable(reason: GLibError(consuming: error).reason)
    }
    self.connection = connection
    self.busName = busName
    self.allowsPlainTransfer = allowsPlainTransfer
  }

  deinit {
    stopMirror()
    if let service = UnsafeMutableRawPointer(bitPattern: proxyAddress.withLock { $0 }) { g_object_unref(service) }
    g_dbus_connection_close_sync(connection, nil, nil)
    g_object_unref(UnsafeMutableRawPointer(connection))
  }

  /// The libsecret proxy of the provider's service object, made on first use (a one-shot read
  /// never needs it). Wraps `clibsecret_service_new`.
  func libsecretService() throws(SecretError) -> UnsafeMutablePointer<CLibSecret.SecretService> {
    let address = try proxyAddress.withLock { (address: inout UInt) throws(SecretError) -> UInt in
      if address != 0 { return address }
      var error: UnsafeMutablePointer<GError>?
      guard let service = clibsecret_service_new(connection, busName, &error) else {
        throw SecretError(GLibError(consuming: error), busName: busName)
      }
      address = UInt(bitPattern: service)
      return address
    }
    guard let service = UnsafeMutablePointer<CLibSecret.SecretService>(bitPattern: address) else {
      throw .busUnavailable(reason: "libsecret gave no service object")
    }
    return service
  }

  /// The session bus address from the environment (`DBUS_SESSION_BUS_ADDRESS`), as GIO finds it.
  static func sessionBusAddress() throws(SecretError) -> String {
    var error: UnsafeMutablePointer<GError>?
    guard let address = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else {
      throw .busUnavailable(reason: GLibError(consuming: error).reason)
    }
    return takeString(address)
  }

  /// Calls `body` with an out-parameter for a `GError`, and converts a failure into `SecretError`.
  func call<T>(
    object: String? = nil,
    _ body: (inout UnsafeMutablePointer<GError>?) -> T?
  ) throws(SecretError) -> T {
    var error: UnsafeMutablePointer<GError>?
    if let result = body(&error), error == nil { return result }
    // libsecret fails without an error only when the user dismissed a prompt.
    guard error != nil else { throw .promptDismissed }
    throw SecretError(GLibError(consuming: error), busName: busName, object: object)
  }
}

/// Turns an owned `gchar*` into a Swift string and frees it.
func takeString(_ pointer: UnsafeMutablePointer<gchar>) -> String {
  defer { g_free(pointer) }
  return String(cString: pointer)
}

/// Calls `body` with a NULL-terminated array of C strings that lives for the call.
func withCStringArray<T>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<gchar>?>) -> T) -> T {
  let duplicates = strings.map { UnsafePointer(strdup($0)) }
  defer { duplicates.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
  var array: [UnsafePointer<gchar>?] = duplicates + [nil]
  return array.withUnsafeMutableBufferPointer { buffer in
    // The buffer is never empty: it always holds the terminating NULL.
    body(buffer.baseAddress.unsafelyUnwrapped)
  }
}
