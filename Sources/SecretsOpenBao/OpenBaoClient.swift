public import Foundation
import FoundationNetworking
import Synchronization

/// A client of OpenBao's KV version 2 engine over its HTTP API: reads, check-and-set writes,
/// deletes and version checks, across every server of a cluster, with its token kept fresh.
///
/// Every method blocks until OpenBao answers: call it off Swift's cooperative pool (the
/// `SecretStorage` it backs is called that way).
///
/// ```swift
/// let bao = OpenBaoClient(OpenBaoConfiguration())          // BAO_ADDR, BAO_TOKEN
/// let secret = try bao.read("deploy/api")                  // nil when absent or deleted
/// let base = try bao.versionState("deploy/api")?.version ?? 0
/// try bao.write("deploy/api", fields: ["token": "…"], checkAndSet: base)
/// ```
public final class OpenBaoClient: Sendable {
  /// Where and how this client reaches OpenBao.
  public let configuration: OpenBaoConfiguration
  let transport: HTTPTransport
  let tokens: TokenKeeper
  /// The server that answered last: the next request starts there.
  private let preferred = Atomic<Int>(0)
  /// The storage index of the last answer. Standby nodes serve reads from their own copy,
  /// which may lag; sent back, it makes any node answer only once it has caught up with
  /// everything this client saw, so a read after a write sees that write.
  private let index = Mutex<String?>(nil)

  /// A client; nothing is sent until the first request.
  ///
  /// - Parameter configuration: The servers, mount, credentials and intervals.
  public init(_ configuration: OpenBaoConfiguration = OpenBaoConfiguration()) {
    self.configuration = configuration
    transport = HTTPTransport(timeout: configuration.requestTimeout)
    tokens = TokenKeeper(configuration.authentication)
  }

  /// One version of a KV secret.
  public struct Secret: Sendable {
    /// The secret's fields, as JSON (an object).
    public let data: Data
    /// The version these fields are.
    public let version: Int

    /// The field `name` as text: a string as it is, any other JSON value as its JSON.
    public func field(_ name: String) -> String? {
      guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let value = object[name]
      else { return nil }
      if let text = value as? String { return text }
      guard let json = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) else {
        return nil
      }
      return String(decoding: json, as: UTF8.self)
    }
  }

  /// The current version of a secret and whether it is deleted; nil when it has never existed
  /// (or its metadata was destroyed).
  public struct VersionState: Sendable, Hashable {
    /// The newest version, deleted or not (what check-and-set compares with).
    public let version: Int
    /// Whether the newest version is deleted or destroyed.
    public let isDeleted: Bool

    /// A state from its parts.
    ///
    /// - Parameters:
    ///   - version: The newest version.
    ///   - isDeleted: Whether it is deleted or destroyed.
    public init(version: Int, isDeleted: Bool) {
      self.version = version
      self.isDeleted = isDeleted
    }
  }

  /// The newest version of the secret at `path` in `mount` (the configured one by default);
  /// nil when there is none or it is deleted.
  public func read(_ path: String, mount: String? = nil) throws(OpenBaoError) -> Secret? {
    let location = dataPath(path, mount: mount)
    let response = try send("GET", location)
    if Self.isAbsent(response) { return nil }
    try expectSuccess(response, location)
    guard let outer = response.json?["data"] as? [String: Any], let fields = outer["data"] as? [String: Any],
      let metadata = outer["metadata"] as? [String: Any], let version = metadata["version"] as? Int,
      let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    else { throw .server(status: response.status, path: location, reason: "the answer is not a KV v2 secret") }
    return Secret(data: data, version: version)
  }

  /// The newest version of the secret at `path`, from its metadata (no secret is sent).
  public func versionState(_ path: String, mount: String? = nil) throws(OpenBaoError) -> VersionState? {
    let location = metadataPath(path, mount: mount)
    let response = try send("GET", location)
    if Self.isAbsent(response) { return nil }
    try expectSuccess(response, location)
    guard let data = response.json?["data"] as? [String: Any], let current = data["current_version"] as? Int else {
      throw .server(status: response.status, path: location, reason: "the answer is not KV v2 metadata")
    }
    let versions = data["versions"] as? [String: Any]
    let newest = versions?[String(current)] as? [String: Any]
    let deletion = (newest?["deletion_time"] as? String).flatMap(Self.date)
    let destroyed = newest?["destroyed"] as? Bool ?? false
    // A mount with `delete_version_after` gives every version a deletion time in the future.
    return VersionState(version: current, isDeleted: destroyed || deletion.map { $0 <= Date() } ?? false)
  }

  /// Writes `fields` as a new version of the secret at `path` and returns its number.
  ///
  /// - Parameters:
  ///   - path: The secret's path inside the mount.
  ///   - fields: The secret's fields.
  ///   - checkAndSet: The version the write is based on: the write fails with
  ///     ``OpenBaoError/conflict(path:version:)`` when the secret's newest version is another
  ///     (0: only when the secret does not exist). Nil writes whatever is there.
  ///   - mount: The KV v2 mount; the configured one by default.
  @discardableResult
  public func write(
    _ path: String, fields: [String: String], checkAndSet: Int?, mount: String? = nil
  ) throws(OpenBaoError) -> Int {
    let location = dataPath(path, mount: mount)
    var body: [String: Any] = ["data": fields]
    if let checkAndSet { body["options"] = ["cas": checkAndSet] }
    let encoded = (try? JSONSerialization.data(withJSONObject: body)) ?? Data()
    let response = try send("POST", location, body: encoded)
    if response.status == 400, response.errorText.contains("check-and-set") {
      throw .conflict(path: location, version: try? versionState(path, mount: mount)?.version)
    }
    try expectSuccess(response, location)
    guard let data = response.json?["data"] as? [String: Any], let version = data["version"] as? Int else {
      throw .server(status: response.status, path: location, reason: "the answer has no version")
    }
    return version
  }

  /// Deletes the newest version of the secret at `path`, or only `version` when given (older
  /// versions stay, and a deleted one can be undeleted with `bao kv undelete`); nothing there is
  /// not an error.
  public func delete(_ path: String, version: Int? = nil, mount: String? = nil) throws(OpenBaoError) {
    let response: HTTPResponse
    let location: String
    if let version {
      location = "\(mount ?? configuration.mount)/delete/\(path)"
      response = try send("POST", location, body: Data(#"{"versions":[\#(version)]}"#.utf8))
    } else {
      location = dataPath(path, mount: mount)
      response = try send("DELETE", location)
    }
    if Self.isAbsent(response) { return }
    try expectSuccess(response, location)
  }

  /// A 404 with no error text: nothing at the path. One that says why (no such mount, no
  /// handler for the route) is an error.
  static func isAbsent(_ response: HTTPResponse) -> Bool {
    response.status == 404 && response.errorText == "HTTP 404"
  }

  /// An RFC 3339 time as OpenBao writes it (nanoseconds, UTC); nil for an empty or odd one.
  static func date(_ text: String) -> Date? {
    guard !text.isEmpty else { return nil }
    let seconds = text.split(separator: ".").first.map { $0.hasSuffix("Z") ? String($0) : $0 + "Z" } ?? text
    return ISO8601DateFormatter().date(from: seconds)
  }

  // MARK: Requests

  func dataPath(_ path: String, mount: String?) -> String {
    "\(mount ?? configuration.mount)/data/\(path)"
  }

  func metadataPath(_ path: String, mount: String?) -> String {
    "\(mount ?? configuration.mount)/metadata/\(path)"
  }

  private func expectSuccess(_ response: HTTPResponse, _ location: String) throws(OpenBaoError) {
    switch response.status {
    case 200..<300: return
    case 403: throw .forbidden(path: location, reason: response.errorText)
    default: throw .server(status: response.status, path: location, reason: response.errorText)
    }
  }

  /// Sends an authenticated request to `/v1/LOCATION`; a token that has stopped working is
  /// obtained again once when its source can give a new one.
  func send(_ method: String, _ location: String, body: Data? = nil) throws(OpenBaoError) -> HTTPResponse {
    let token = try tokens.current(using: self)
    let response = try sendToCluster(method, location, body: body, token: token)
    // A 403 is often just a policy; only a token that no longer works is replaced.
    guard response.status == 403, tokens.canObtainAgain, !tokens.isValid(token, using: self) else { return response }
    tokens.invalidate(token)
    return try sendToCluster(method, location, body: body, token: try tokens.current(using: self))
  }

  /// Sends a request to the first server that can answer it: a server that cannot be reached,
  /// is sealed, or is a standby with no active node to forward to is skipped. While a cluster
  /// recovers from losing its leader (see `isPassing`), rounds are repeated until the request
  /// timeout has passed since the first.
  func sendToCluster(_ method: String, _ location: String, body: Data?, token: String?) throws(OpenBaoError)
    -> HTTPResponse
  {
    let addresses = configuration.addresses
    guard !addresses.isEmpty else { throw .unreachable(addresses: [], reason: "no server address configured") }
    let deadline = ContinuousClock.now + configuration.requestTimeout
    var pause = Duration.milliseconds(50)
    while true {
      var failure = "no answer"
      var sealed: String?
      var passing = false
      let start = preferred.load(ordering: .relaxed)
      for offset in 0..<addresses.count {
        let index = (start + offset) % addresses.count
        switch attempt(method, addresses[index], location, body: body, token: token) {
        case .answered(let response):
          preferred.store(index, ordering: .relaxed)
          if let seen = response.index { self.index.withLock { $0 = seen } }
          return response
        case .unreachable(let reason): failure = reason
        case .sealed: sealed = addresses[index].absoluteString
        case .passing: passing = true
        }
      }
      if passing, ContinuousClock.now + pause < deadline {
        Thread.sleep(forTimeInterval: pause.seconds)
        pause = min(pause * 2, .milliseconds(500))
        continue
      }
      if let sealed { throw .sealed(address: sealed) }
      throw .unreachable(
        addresses: addresses.map(\.absoluteString),
        reason: passing ? "no active server: the cluster is electing a leader" : failure)
    }
  }

  /// What one server made of a request.
  private enum Outcome {
    case answered(HTTPResponse)
    case unreachable(String)
    case sealed
    /// A state the cluster passes through: ask again later.
    case passing
  }

  private func attempt(_ method: String, _ address: URL, _ location: String, body: Data?, token: String?) -> Outcome {
    var response: HTTPResponse
    do throws(TransportFailure) {
      response = try transport.send(makeRequest(method, Self.url(address, location), body: body, token: token))
    } catch {
      return .unreachable(error.reason)
    }
    // A standby that does not forward names the active node: one hop there, and only to a
    // configured server (the token and the body go with it). When that node cannot be
    // reached, the standby's view is stale: the cluster is electing.
    if (301...308).contains(response.status) {
      guard let target = response.location.flatMap(URL.init(string:)), let server = configuredServer(target) else {
        return .unreachable("\(address.absoluteString) redirected to a server that is not configured")
      }
      do throws(TransportFailure) {
        response = try transport.send(makeRequest(method, Self.url(server, location), body: body, token: token))
      } catch {
        return .passing
      }
    }
    if response.status == 503, response.errorText.contains("sealed") { return .sealed }
    return Self.isPassing(response) ? .passing : .answered(response)
  }

  /// The configured server a redirect points at (same scheme, host and port), if any.
  private func configuredServer(_ target: URL) -> URL? {
    configuration.addresses.first {
      $0.scheme == target.scheme && $0.host() == target.host() && ($0.port ?? 0) == (target.port ?? 0)
    }
  }

  /// Whether the answer is a state a cluster passes through: no active node yet, a new active
  /// node still preparing its KV mounts, a node not yet at the storage index asked for (412),
  /// a node asking to be asked later (429).
  static func isPassing(_ response: HTTPResponse) -> Bool {
    let text = response.errorText
    return ((500...503).contains(response.status) && text.contains("active"))
      || (response.status == 400 && text.contains("Waiting for the primary"))
      || response.status == 412 || response.status == 429 || text.contains("storage index")
  }

  /// `ADDRESS/v1/LOCATION`, the location's characters that a path cannot hold percent-encoded
  /// (a `%` too: KV names made from service and account hold escapes of their own).
  static func url(_ address: URL, _ location: String) -> URL {
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove(charactersIn: "%;?#")
    let encoded = location.addingPercentEncoding(withAllowedCharacters: allowed) ?? location
    let base =
      address.absoluteString.hasSuffix("/") ? String(address.absoluteString.dropLast()) : address.absoluteString
    return URL(string: base + "/v1/" + encoded) ?? address
  }

  private func makeRequest(_ method: String, _ url: URL, body: Data?, token: String?) -> URLRequest {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.httpBody = body
    request.cachePolicy = .reloadIgnoringLocalCacheData
    if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
    if let token { request.setValue(token, forHTTPHeaderField: "X-Vault-Token") }
    if let seen = index.withLock({ $0 }) { request.setValue(seen, forHTTPHeaderField: "X-Vault-Index") }
    return request
  }
}
