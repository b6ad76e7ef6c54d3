import Synchronization
import SystemCalls

/// A typed client of the freedesktop Secret Service (secretd, gnome-keyring, KeePassXC, …).
///
/// Items are found by their attributes. An absent item is `nil`, never an error; anything else
/// that goes wrong is a ``SecretError`` that says what to do.
///
/// ```swift
/// let client = SecretClient()
/// try client.write(SecretValue("hunter2"), service: "example.org", account: "alice")
/// let password = try client.read(service: "example.org", account: "alice")?.text
/// ```
///
/// Every method exists twice: synchronous, blocking the calling thread, and `async`, which runs
/// the blocking libsecret call on dedicated threads, never on Swift's cooperative pool.
public final class SecretClient: Sendable {
  /// Which D-Bus bus the client talks to.
  public enum Bus: Sendable, Hashable {
    /// The session bus of the environment (`DBUS_SESSION_BUS_ADDRESS`).
    case session
    /// A bus at a given D-Bus address, such as `unix:path=/run/user/1000/bus`.
    case address(String)
  }

  /// The bus the client connects to, on its first call.
  public let bus: Bus
  /// The bus name of the provider: `org.freedesktop.secrets` unless `SECRET_SERVICE_BUS_NAME` says otherwise.
  public let busName: String
  /// Whether a provider that offers only `plain` transfer may be used, secrets then crossing
  /// the bus unencrypted; otherwise such a provider is refused with
  /// ``SecretError/plainTransferRefused(busName:)``.
  public let allowsPlainTransfer: Bool

  private let handle = Mutex<ServiceHandle?>(nil)

  /// Creates a client. Nothing is contacted until the first call, so this never fails.
  ///
  /// Before any secret is sent or accepted, the client checks that the provider's bus name is
  /// owned by a process of its own Unix user, and refuses with
  /// ``SecretError/providerOfAnotherUser(_:)`` otherwise. Secrets cross the bus encrypted
  /// (`dh-ietf1024-sha256-aes128-cbc-pkcs7`); a provider that offers only `plain` is refused
  /// unless `allowsPlainTransfer` says it is meant.
  ///
  /// - Parameters:
  ///   - bus: the bus to talk to; the session bus unless given.
  ///   - busName: the provider's name; `org.freedesktop.secrets` unless given (or set in
  ///     `SECRET_SERVICE_BUS_NAME`).
  ///   - allowsPlainTransfer: use a provider that cannot encrypt secrets on the bus.
  public init(bus: Bus = .session, busName: String? = nil, allowsPlainTransfer: Bool = false) {
    self.bus = bus
    self.allowsPlainTransfer = allowsPlainTransfer
    self.busName =
      busName ?? Environment.value(of: "SECRET_SERVICE_BUS_NAME") ?? "org.freedesktop.secrets"
  }

  /// Runs `body` with a connected service handle. When the call fails because the provider went
  /// away or was replaced, the connection is dropped and the call is tried once more on a new one.
  /// What `body` returns reaches the caller only once the provider of a session it opened is
  /// vouched for.
  func withService<T>(_ body: (ServiceHandle) throws(SecretError) -> T) throws(SecretError) -> T {
    func vouched(_ service: ServiceHandle) throws(SecretError) -> T {
      let result = try body(service)
      try service.vouchForSession()
      return result
    }
    let (service, isNew) = try currentService()
    do {
      return try vouched(service)
    } catch  where !isNew && error.meansConnectionIsStale {
      discard(service)
      return try vouched(try currentService().service)
    } catch {
      if error.meansConnectionIsStale { discard(service) }
      throw error
    }
  }

  private func currentService() throws(SecretError) -> (service: ServiceHandle, isNew: Bool) {
    try handle.withLock { (cached: inout ServiceHandle?) throws(SecretError) in
      if let cached { return (cached, false) }
      let address: String
      switch bus {
      case .session: address = try ServiceHandle.sessionBusAddress()
      case .address(let given): address = given
      }
      let service = try ServiceHandle(address: address, busName: busName, allowsPlainTransfer: allowsPlainTransfer)
      cached = service
      return (service, true)
    }
  }

  private func discard(_ service: ServiceHandle) {
    handle.withLock { cached in
      if cached === service { cached = nil }
    }
  }
}

extension SecretError {
  /// Errors after which the cached connection or transfer session cannot be trusted.
  var meansConnectionIsStale: Bool {
    switch self {
    case .serviceUnavailable, .busUnavailable: true
    case .dbus(let name, _): name.hasSuffix(".NoSession")
    default: false
    }
  }
}
