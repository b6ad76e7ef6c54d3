// How OpenBaoClient's requests reach a cluster: the token, failover between servers, standby
// redirects, elections and read-after-write on standbys.
import Foundation

extension OpenBaoClient {
  /// Sends an authenticated request to `/v1/LOCATION`. A 403 is often just a policy, and is
  /// answered as it is while the token still works (`auth/token/lookup-self`); a token that no
  /// longer works is obtained again once when its source can give another, and is otherwise
  /// an error that says what to check at its source.
  func send(_ method: String, _ location: String, query: String? = nil, body: Data? = nil) throws(OpenBaoError)
    -> HTTPResponse
  {
    let token = try tokens.current(using: self)
    let response = try sendToCluster(method, location, query: query, body: body, token: token)
    guard response.status == 403, !tokens.isValid(token, using: self) else { return response }
    guard tokens.canObtainAgain else { throw tokens.refused(reason: response.errorText) }
    tokens.invalidate(token)
    let replacement = try tokens.current(using: self)
    let again = try sendToCluster(method, location, query: query, body: body, token: replacement)
    guard again.status == 403, !tokens.isValid(replacement, using: self) else { return again }
    tokens.invalidate(replacement)
    throw tokens.refused(reason: again.errorText)
  }

  /// Sends a request to the first server that can answer it: a server that cannot be reached,
  /// is sealed, or is a standby with no active node to forward to is skipped. While a cluster
  /// recovers from losing its leader (see `isPassing`), rounds are repeated until the request
  /// timeout has passed since the first.
  ///
  /// A write that may have been carried out by a server whose answer never came (it died
  /// meanwhile, or a standby's forwarding to it failed) is not confirmed: when no later attempt is answered, that is the
  /// error (``OpenBaoError/writeUnconfirmed(path:reason:)``); when one is, its answer says so
  /// (`followsUnconfirmedAttempt`), for it may answer a repeat of what was done.
  func sendToCluster(_ method: String, _ location: String, query: String? = nil, body: Data?, token: String?)
    throws(OpenBaoError) -> HTTPResponse
  {
    let addresses = configuration.addresses
    guard !addresses.isEmpty else { throw .unreachable(addresses: [], reason: "no server address configured") }
    let deadline = ContinuousClock.now + configuration.requestTimeout
    // Reads, and the token's own requests (a login, a renewal), may be made twice unnoticed.
    let repeatable = method == "GET" || location.hasPrefix("auth/")
    var pause = Duration.milliseconds(50)
    var unconfirmed = false
    while true {
      var failure = "no answer"
      var sealed: String?
      var passing = false
      let start = preferred.load(ordering: .relaxed)
      for offset in 0..<addresses.count {
        let server = (start + offset) % addresses.count
        let outcome = attempt(method, addresses[server], location, query: query, body: body, token: token)
        unconfirmed = unconfirmed || (!repeatable && outcome.mayHaveBeenCarriedOut)
        switch outcome {
        case .answered(var response):
          preferred.store(server, ordering: .relaxed)
          if let seen = response.index { index.withLock { $0 = seen } }
          response.followsUnconfirmedAttempt = unconfirmed
          return response
        case .unreachable(let reason, _): failure = reason
        case .sealed: sealed = addresses[server].absoluteString
        case .passing: passing = true
        }
      }
      if passing, ContinuousClock.now + pause < deadline {
        Thread.sleep(forTimeInterval: pause.seconds)
        pause = min(pause * 2, .milliseconds(500))
        continue
      }
      let reason = passing ? "no active server: the cluster is electing a leader" : failure
      if unconfirmed { throw .writeUnconfirmed(path: location, reason: reason) }
      if let sealed { throw .sealed(address: sealed) }
      throw .unreachable(addresses: addresses.map(\.absoluteString), reason: reason)
    }
  }

  /// What one server made of a request.
  private enum Outcome {
    case answered(HTTPResponse)
    case unreachable(String, mayHaveArrived: Bool)
    case sealed
    /// A state the cluster passes through: ask again later.
    case passing(mayHaveArrived: Bool)

    /// Whether the server may have carried the request out without its answer arriving.
    var mayHaveBeenCarriedOut: Bool {
      switch self {
      case .unreachable(_, let arrived), .passing(let arrived): arrived
      case .answered, .sealed: false
      }
    }
  }

  private func attempt(
    _ method: String, _ address: URL, _ location: String, query: String?, body: Data?, token: String?
  ) -> Outcome {
    var response: HTTPResponse
    do throws(TransportFailure) {
      response = try transport.send(
        makeRequest(method, Self.url(address, location, query: query), body: body, token: token))
    } catch {
      return .unreachable(error.reason, mayHaveArrived: error.mayHaveArrived)
    }
    // A standby that does not forward names the active node: one hop there, and only to a
    // configured server (the token and the body go with it). When that node cannot be
    // reached, the standby's view is stale: the cluster is electing. A standby redirects when
    // its forwarding failed, which may have been after the active node carried it out.
    if (301...308).contains(response.status) {
      guard let target = response.location.flatMap(URL.init(string:)), let server = configuredServer(target) else {
        return .unreachable(
          "\(address.absoluteString) redirected to a server that is not configured", mayHaveArrived: true)
      }
      do throws(TransportFailure) {
        response = try transport.send(
          makeRequest(method, Self.url(server, location, query: query), body: body, token: token))
      } catch {
        return .passing(mayHaveArrived: true)
      }
    }
    if response.status == 503, response.errorText.contains("sealed") { return .sealed }
    return Self.isPassing(response) ? .passing(mayHaveArrived: false) : .answered(response)
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
    // The status first: the body of an ordinary answer (a secret) is not parsed here.
    switch response.status {
    case 412, 429: return true
    case 400:
      return response.errorText.contains("Waiting for the primary") || response.errorText.contains("storage index")
    case 500...503: return response.errorText.contains("active") || response.errorText.contains("storage index")
    default: return false
    }
  }

  /// `ADDRESS/v1/LOCATION?QUERY`, the location's characters that a path cannot hold
  /// percent-encoded (a `%` too: KV names made from service and account hold escapes of their
  /// own). The query is the client's own (`version=3`), never a name.
  static func url(_ address: URL, _ location: String, query: String? = nil) -> URL {
    let base =
      address.absoluteString.hasSuffix("/") ? String(address.absoluteString.dropLast()) : address.absoluteString
    return URL(string: base + "/v1/" + pathEncoded(location) + (query.map { "?" + $0 } ?? "")) ?? address
  }

  /// `location` with each byte outside a path segment's characters and `/` (RFC 3986's pchar,
  /// without `;`) written `%XX`.
  private static func pathEncoded(_ location: String) -> String {
    var encoded: [UInt8] = []
    encoded.reserveCapacity(location.utf8.count)
    for byte in location.utf8 {
      if isPathByte(byte) {
        encoded.append(byte)
      } else {
        encoded += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
      }
    }
    return String(decoding: encoded, as: UTF8.self)
  }

  private static let hexDigits = Array("0123456789ABCDEF".utf8)

  private static func isPathByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
    case UInt8(ascii: "0")...UInt8(ascii: "9"): true
    default: "-._~!$&'()*+,=:@/".utf8.contains(byte)
    }
  }

  private func makeRequest(_ method: String, _ url: URL, body: Data?, token: String?) -> HTTPRequest {
    var request = HTTPRequest(method: method, url: url, body: body)
    if body != nil { request.headers.append(("Content-Type", "application/json")) }
    if let token { request.headers.append(("X-Vault-Token", token)) }
    if let seen = index.withLock({ $0 }) { request.headers.append(("X-Vault-Index", seen)) }
    return request
  }
}
