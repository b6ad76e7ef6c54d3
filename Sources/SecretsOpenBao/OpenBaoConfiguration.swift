public import Foundation
public import SecretClient

/// Where and how ``OpenBaoClient`` reaches OpenBao: the servers of a cluster, the KV v2 mount,
/// the credentials, and how often watched secrets are polled.
///
/// ```swift
/// let fleet = OpenBaoConfiguration(
///   addresses: [URL(string: "https://bao-1:8200")!, URL(string: "https://bao-2:8200")!],
///   authentication: .appRole(roleID: "deploy", secretID: .secretService(service: "bao", account: "deploy")))
/// ```
public struct OpenBaoConfiguration: Sendable {
  /// The servers, tried in order: a request that cannot reach one (down, sealed, a standby that
  /// does not forward) goes to the next, and later requests start at the one that answered.
  public var addresses: [URL]
  /// Where the KV version 2 engine is mounted (`secret` on a dev server).
  public var mount: String
  /// A folder inside the mount that holds every key's secret (empty: the mount's root).
  public var folder: String
  /// Where the token comes from.
  public var authentication: OpenBaoAuthentication
  /// How often each watched secret is asked for its version: changes made elsewhere arrive
  /// within this time, and a watched secret that does not change costs one small request per
  /// interval.
  public var pollInterval: Duration
  /// How long one server may take to answer before the next is tried, and how long in all a
  /// request waits for a cluster that is electing a leader or catching up. Connecting, and each
  /// read or write on a connection, count it in whole seconds, rounded up.
  public var requestTimeout: Duration

  /// A configuration from its parts.
  ///
  /// - Parameters:
  ///   - addresses: The servers; `BAO_ADDR` (or `VAULT_ADDR`) when empty, else
  ///     `http://127.0.0.1:8200`.
  ///   - mount: The KV v2 mount; `secret` by default.
  ///   - folder: A folder inside the mount for every key's secret; none by default.
  ///   - authentication: Where the token comes from; `BAO_TOKEN` (or `VAULT_TOKEN`) by default.
  ///   - pollInterval: How often watched secrets are polled; 1 s by default.
  ///   - requestTimeout: How long one request may take; 10 s by default.
  public init(
    addresses: [URL] = [], mount: String = "secret", folder: String = "",
    authentication: OpenBaoAuthentication = .environment, pollInterval: Duration = .seconds(1),
    requestTimeout: Duration = .seconds(10)
  ) {
    self.addresses = addresses.isEmpty ? Self.addressesFromEnvironment() : addresses
    self.mount = mount.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    self.folder = folder.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    self.authentication = authentication
    self.pollInterval = pollInterval
    self.requestTimeout = requestTimeout
  }

  /// `BAO_ADDR` or `VAULT_ADDR` (a comma-separated list is several servers), else the dev
  /// server's address.
  static func addressesFromEnvironment() -> [URL] {
    let environment = ProcessInfo.processInfo.environment
    let text = environment["BAO_ADDR"] ?? environment["VAULT_ADDR"] ?? "http://127.0.0.1:8200"
    return text.split(separator: ",").compactMap { URL(string: $0.trimmingCharacters(in: .whitespaces)) }
  }
}

/// Where ``OpenBaoClient`` gets its token.
public enum OpenBaoAuthentication: Sendable {
  /// `BAO_TOKEN`, else `VAULT_TOKEN`.
  case environment
  /// A token given by the program.
  case token(String)
  /// The first line of a file (such as an agent's sink file); read again when the token
  /// expires, so a rotated file is picked up.
  case tokenFile(String)
  /// A token kept in the Secret Service (`secretctl set bao token`): nothing secret in a file.
  /// Read through `client`, the session bus's provider by default.
  case secretService(service: String, account: String, client: SecretClient = SecretClient())
  /// An AppRole login (`auth/approle/login`), made again when the token expires.
  case appRole(roleID: String, secretID: SecretIDSource)

  /// Where an AppRole's secret id comes from.
  public enum SecretIDSource: Sendable {
    /// Given by the program.
    case value(String)
    /// Kept in the Secret Service, read through `client`.
    case secretService(service: String, account: String, client: SecretClient = SecretClient())
  }
}

extension URL {
  /// `http://` to a host other than this machine's loopback (`localhost`, `127.0.0.0/8`, `::1`).
  var isPlainHTTPToAnotherMachine: Bool {
    guard scheme?.lowercased() == "http", let host = host()?.lowercased() else { return false }
    let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
    let loopbackIPv4 = octets.count == 4 && !octets.contains(nil) && octets.first == 127
    return !(host == "localhost" || host == "::1" || host == "[::1]" || loopbackIPv4)
  }
}
