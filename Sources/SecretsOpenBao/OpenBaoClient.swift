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
/// let secret = try bao.read("deploy/api")                  // nil when absent
/// try bao.write("deploy/api", fields: ["token": "…"], checkAndSet: secret?.version ?? 0)
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
  }

  /// The newest version of the secret at `path` in `mount` (the configured one by default);
  /// nil when there is none or it is deleted.
  public func read(_ path: String, mount: String? = nil) throws(OpenBaoError) -> Secret? {
    let location = dataPath(path, mount: mount)
    let response = try send("GET", location)
    if response.status == 404 { return nil }
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
    if response.status == 404 { return nil }
    try expectSuccess(response, location)
    guard let data = response.json?["data"] as? [String: Any], let current = data["current_version"] as? Int else {
      throw .server(status: response.status, path: location, reason: "the answer is not KV v2 metadata")
    }
    let versions = data["versions"] as? [String: Any]
    let newest = versions?[String(current)] as? [String: Any]
    let deletion = newest?["deletion_time"] as? String ?? ""
    let destroyed = newest?["destroyed"] as? Bool ?? false
    return VersionState(version: current, isDeleted: !deletion.isEmpty || destroyed)
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

  /// Deletes the newest version of the secret at `path` (older versions stay, and the deleted
  /// one can be undeleted with `bao kv undelete`); nothing there is not an error.
  public func delete(_ path: String, mount: String? = nil) throws(OpenBaoError) {
    let location = dataPath(path, mount: mount)
    let response = try send("DELETE", location)
    if response.status == 404 { return }
    try expectSuccess(response, location)
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

  /// Sends an authenticated request to `/v1/LOCATION`; a token refused as expired is obtained
  /// again once when its source can give a new one.
  func send(_ method: String, _ location: String, body: Data? = nil) throws(OpenBaoError) -> HTTPResponse {
    let token = try tokens.current(using: self)
    let response = try sendToCluster(method, location, body: body, token: token)
    guard response.status == 403, tokens.canObtainAgain else { return response }
    tokens.invalidate(token)
    return try sendToCluster(method, location, body: body, token: try tokens.current(using: self))
  }

  /// Sends a request to the first server that can answer it: a server that cannot be reached,
  /// is sealed, or is a standby with no active node to forward to is skipped. While a cluster
  /// recovers from losing its leader (see `isPassing`), rounds are repeated for up to the
  /// request timeout.
  func sendToCluster(_ method: String, _ location: String, body: Data?, token: String?) throws(OpenBaoError)
    -> HTTPResponse
  {
    let addresses = configuration.addresses
    guard !addresses.isEmpty else { throw .unreachable(addresses: [], reason: "no server address configured") }
    let deadline = ContinuousClock.now + configuration.requestTimeout
    var pause = Duration.milliseconds(50)
    while true {
      var failures: [String] = []
      var sealed: String?
      var electing = false
      let start = preferred.load(ordering: .relaxed)
      for offset in 0..<addresses.count {
        let index = (start + offset) % addresses.count
        let request = makeRequest(method, Self.url(addresses[index], location), body: body, token: token)
        var response: HTTPResponse
        do throws(TransportFailure) { response = try transport.send(request) } catch {
          failures.append(error.reason)
          continue
        }
        // A standby that does not forward names the active node: one hop there. When that node
        // cannot be reached, the standby's view is stale: the cluster is electing.
        if (301...308).contains(response.status), let target = response.location.flatMap(URL.init(string:)) {
          do throws(TransportFailure) {
            response = try transport.send(makeRequest(method, target, body: body, token: token))
          } catch {
            electing = true
            continue
          }
        }
        if response.status == 503, response.errorText.contains("sealed") {
          sealed = addresses[index].absoluteString
          continue
        }
        if Self.isPassing(response) {
          electing = true
          continue
        }
        preferred.store(index, ordering: .relaxed)
        if let seen = response.index { self.index.withLock { $0 = seen } }
        return response
      }
      if electing, ContinuousClock.now + pause < deadline {
        Thread.sleep(forTimeInterval: pause.seconds)
        pause = min(pause * 2, .milliseconds(500))
        continue
      }
      if let sealed { throw .sealed(address: sealed) }
      throw .unreachable(
        addresses: addresses.map(\.absoluteString),
        reason: electing ? "no active server: the cluster is electing a leader" : failures.last ?? "no answer")
    }
  }

  /// Whether the answer is a state a cluster passes through: no active node yet, a new active
  /// node still preparing its KV mounts, a node not yet at the storage index asked for.
  static func isPassing(_ response: HTTPResponse) -> Bool {
    let text = response.errorText
    return ((500...503).contains(response.status) && text.contains("active"))
      || (response.status == 400 && text.contains("Waiting for the primary"))
      || response.status == 412 || text.contains("storage index")
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
