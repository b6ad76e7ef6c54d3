// How OpenBaoClient's requests reach a cluster: the token, failover between servers, standby
// redirects, elections and read-after-write on standbys.
import Foundation
import FoundationNetworking

extension OpenBaoClient {
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
        let server = (start + offset) % addresses.count
        switch attempt(method, addresses[server], location, body: body, token: token) {
        case .answered(let response):
          preferred.store(server, ordering: .relaxed)
          if let seen = response.index { index.withLock { $0 = seen } }
          return response
        case .unreachable(let reason): failure = reason
        case .sealed: sealed = addresses[server].absoluteString
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
    // The status first: the body of an ordinary answer (a secret) is not parsed here.
    switch response.status {
    case 412, 429: return true
    case 400:
      return response.errorText.contains("Waiting for the primary") || response.errorText.contains("storage index")
    case 500...503: return response.errorText.contains("active") || response.errorText.contains("storage index")
    default: return false
    }
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
