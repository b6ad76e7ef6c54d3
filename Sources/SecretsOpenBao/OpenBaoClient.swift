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
  let preferred = Atomic<Int>(0)
  /// The storage index of the last answer. Standby nodes serve reads from their own copy,
  /// which may lag; sent back, it makes any node answer only once it has caught up with
  /// everything this client saw, so a read after a write sees that write.
  let index = Mutex<String?>(nil)

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
}
