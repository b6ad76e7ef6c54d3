public import Foundation
import Synchronization
import SystemCalls

/// A client of OpenBao's KV version 2 engine over its HTTP API: reads, check-and-set writes,
/// deletes and version checks, across every server of a cluster, with its token kept fresh.
///
/// Every method blocks until OpenBao answers: call it off Swift's cooperative pool (the keys of
/// the `SecretKeyStore` it backs call it that way).
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

  /// A client; nothing is sent until the first request. A server reached over plain `http://`
  /// anywhere but this machine is warned about: the token and every secret would cross the
  /// network unencrypted.
  ///
  /// - Parameters:
  ///   - configuration: The servers, mount, credentials and intervals.
  ///   - reportIssue: Where warnings go; standard error by default.
  public convenience init(
    _ configuration: OpenBaoConfiguration = OpenBaoConfiguration(),
    reportIssue: @escaping @Sendable (String) -> Void = OpenBaoClient.printWarning
  ) {
    self.init(configuration, reportIssue: reportIssue, now: { ContinuousClock.now })
  }

  /// A client whose token renewals follow `now` (a test's clock).
  init(
    _ configuration: OpenBaoConfiguration,
    reportIssue: @escaping @Sendable (String) -> Void = OpenBaoClient.printWarning,
    now: @escaping @Sendable () -> ContinuousClock.Instant
  ) {
    self.configuration = configuration
    transport = HTTPTransport(timeout: configuration.requestTimeout)
    tokens = TokenKeeper(configuration.authentication, now: now)
    for address in configuration.addresses where address.isPlainHTTPToAnotherMachine {
      reportIssue(
        "OpenBao at \(address.absoluteString) is reached over plain http: the token and every secret cross the "
          + "network unencrypted; use https:// (plain http is for a server on this machine only)")
    }
  }

  /// Writes a warning to standard error.
  public static let printWarning: @Sendable (String) -> Void = { message in
    try? FileDescriptor.standardError.writeAll("OpenBao warning: \(message)\n")
  }

  /// One version of a KV secret.
  public struct Secret: Sendable {
    /// The secret's fields, as JSON (an object).
    public let data: Data
    /// The version these fields are.
    public let version: Int

    /// The field `name` as text: a string as it is, any other JSON value as its JSON.
    public func field(_ name: String) -> String? {
      guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
      return Self.text(of: object[name])
    }

    /// A field's value as text: a string as it is, any other JSON value as its JSON.
    static func text(of value: Any?) -> String? {
      guard let value else { return nil }
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

  /// The newest version of the secret at `path` in `mount` (the configured one by default), or
  /// the version asked for; nil when there is none or it is deleted.
  public func read(_ path: String, version: Int? = nil, mount: String? = nil) throws(OpenBaoError) -> Secret? {
    guard let (fields, version) = try readFields(path, version: version, mount: mount) else { return nil }
    return Secret(data: try json(of: fields, at: path, mount: mount), version: version)
  }

  /// ``read(_:version:mount:)``'s fields as the answer's JSON parsed them, for a caller that
  /// wants one field (the answer is parsed once, and not written out again).
  func readFields(_ path: String, version: Int? = nil, mount: String? = nil) throws(OpenBaoError)
    -> (fields: [String: Any], version: Int)?
  {
    let location = dataPath(path, mount: mount)
    let response = try send("GET", location, query: version.map { "version=\($0)" })
    if Self.isAbsent(response) { return nil }
    try expectSuccess(response, location)
    guard let outer = response.json?["data"] as? [String: Any], let fields = outer["data"] as? [String: Any],
      let metadata = outer["metadata"] as? [String: Any], let version = metadata["version"] as? Int
    else { throw .server(status: response.status, path: location, reason: "the answer is not a KV v2 secret") }
    return (fields, version)
  }

  /// The fields `readFields` gave for `path` as a JSON object, keys sorted.
  func json(of fields: [String: Any], at path: String, mount: String? = nil) throws(OpenBaoError) -> Data {
    guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else {
      throw .server(status: 200, path: dataPath(path, mount: mount), reason: "the answer is not a KV v2 secret")
    }
    return data
  }

  /// The newest version of the secret at `path`, from its metadata (no secret is sent). Metadata
  /// written before any version (`bao kv metadata put`) is version 0, deleted: nothing to read.
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
    let deleted = destroyed || deletion.map { $0 <= Date() } ?? false
    return VersionState(version: current, isDeleted: current == 0 || deleted)
  }

  /// Writes `fields` as a new version of the secret at `path` and returns its number.
  ///
  /// - Parameters:
  ///   - path: The secret's path inside the mount.
  ///   - fields: The secret's fields.
  ///   - checkAndSet: The version the write is based on: the write fails with
  ///     ``OpenBaoError/conflict(path:version:)`` when the secret's newest version is another
  ///     (0: only when the secret does not exist), naming that version. Nil writes whatever is
  ///     there.
  ///   - mount: The KV v2 mount; the configured one by default.
  /// - Returns: The version written. When the cluster lost a node holding this very write
  ///   before it answered and the write then met itself (version `checkAndSet + 1`, the newest,
  ///   holds exactly `fields`), that version.
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
      // Asked first: once a node shows the newer version, reads of it see it too.
      let newest = newestVersion(path, after: checkAndSet, mount: mount)
      if response.followsUnconfirmedAttempt, let checkAndSet, newest == checkAndSet + 1,
        try holds(path, version: checkAndSet + 1, exactly: fields, mount: mount)
      {
        return checkAndSet + 1
      }
      throw .conflict(path: location, version: newest)
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

  /// Whether `version` of the secret at `path` holds exactly `fields`.
  func holds(_ path: String, version: Int, exactly fields: [String: String], mount: String?) throws(OpenBaoError)
    -> Bool
  {
    guard let secret = try read(path, version: version, mount: mount),
      let stored = (try? JSONSerialization.jsonObject(with: secret.data)) as? [String: String]
    else { return false }
    return stored == fields
  }

  /// The newest version after a check-and-set write based on `base` failed: a node that still
  /// shows `base` (a standby behind the node that refused) is asked again until it shows the
  /// version that made the write fail, for up to the request timeout. Its answer's storage index
  /// then makes every later request wait for a node at least that new. Nil when unknown.
  private func newestVersion(_ path: String, after base: Int?, mount: String?) -> Int? {
    let deadline = ContinuousClock.now + configuration.requestTimeout
    while true {
      let state: VersionState?
      do { state = try versionState(path, mount: mount) } catch { return nil }
      // No metadata is version 0 to a node that has not seen the secret created yet.
      guard (state?.version ?? 0) == base, ContinuousClock.now < deadline else { return state?.version }
      Thread.sleep(forTimeInterval: 0.05)
    }
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
