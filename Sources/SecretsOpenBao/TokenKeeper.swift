import Foundation
import SecretClient
import Synchronization

/// The client's token: obtained from its source on first use, renewed before it expires (at
/// two thirds of its time to live), obtained again when renewal is not possible and the source
/// can give another.
final class TokenKeeper: Sendable {
  private struct State {
    var token: String?
    /// When to renew (or obtain again); nil for a token that does not expire.
    var renewAt: ContinuousClock.Instant?
    var renewable = false
  }

  private let source: OpenBaoAuthentication
  private let state = Mutex(State())

  init(_ source: OpenBaoAuthentication) { self.source = source }

  /// Whether a refused token may be replaced by asking the source again.
  var canObtainAgain: Bool {
    switch source {
    case .environment, .token: false
    case .tokenFile, .secretService, .appRole: true
    }
  }

  /// Whether `token` still works (`auth/token/lookup-self` answers).
  func isValid(_ token: String, using client: OpenBaoClient) -> Bool {
    (try? client.sendToCluster("GET", "auth/token/lookup-self", body: nil, token: token).status) == 200
  }

  /// Forgets `token` (refused by the server), so the next request obtains a new one.
  func invalidate(_ token: String) {
    state.withLock { if $0.token == token { $0 = State() } }
  }

  /// The token to send now.
  func current(using client: OpenBaoClient) throws(OpenBaoError) -> String {
    try state.withLock { (state: inout State) throws(OpenBaoError) -> String in
      if let token = state.token {
        guard let renewAt = state.renewAt, ContinuousClock.now >= renewAt else { return token }
        if state.renewable, let renewed = try? renew(token, using: client) {
          state = renewed
          return token
        }
        guard canObtainAgain else {
          // Nothing else to try: the token is used until it expires, without a renewal a request.
          state.renewAt = nil
          return token
        }
      }
      state = try obtain(using: client)
      return state.token ?? ""
    }
  }

  // MARK: Obtaining and renewing

  private func obtain(using client: OpenBaoClient) throws(OpenBaoError) -> State {
    switch source {
    case .appRole(let roleID, let secretID):
      return try logIn(roleID: roleID, secretID: try Self.text(of: secretID), using: client)
    default:
      let token = try plainToken()
      return try lookUp(token, using: client)
    }
  }

  private func plainToken() throws(OpenBaoError) -> String {
    switch source {
    case .environment:
      let environment = ProcessInfo.processInfo.environment
      guard let token = environment["BAO_TOKEN"] ?? environment["VAULT_TOKEN"], !token.isEmpty else {
        throw .noToken("BAO_TOKEN and VAULT_TOKEN are not set")
      }
      return token
    case .token(let token): return token
    case .tokenFile(let path):
      guard let contents = FileManager.default.contents(atPath: path),
        let line = String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isNewline).first, !line.isEmpty
      else { throw .noToken("the token file \(path) cannot be read or is empty") }
      return String(line)
    case .secretService(let service, let account, let client):
      return try Self.keptSecret(service: service, account: account, client: client)
    case .appRole: throw .noToken("an AppRole gives its token by logging in")
    }
  }

  private static func text(of source: OpenBaoAuthentication.SecretIDSource) throws(OpenBaoError) -> String {
    switch source {
    case .value(let text): text
    case .secretService(let service, let account, let client):
      try keptSecret(service: service, account: account, client: client)
    }
  }

  private static func keptSecret(service: String, account: String, client: SecretClient) throws(OpenBaoError)
    -> String
  {
    let value: SecretValue?
    do throws(SecretError) { value = try client.read(service: service, account: account) } catch {
      throw .noToken("the Secret Service could not give service \(service), account \(account): \(error)")
    }
    guard let text = value?.text, !text.isEmpty else {
      throw .noToken("the Secret Service holds nothing for service \(service), account \(account)")
    }
    return text.trimmingCharacters(in: .newlines)
  }

  /// Learns a token's time to live (`auth/token/lookup-self`); a token that may not look
  /// itself up (no default policy) is used as it is, never renewed.
  private func lookUp(_ token: String, using client: OpenBaoClient) throws(OpenBaoError) -> State {
    let response = try client.sendToCluster("GET", "auth/token/lookup-self", body: nil, token: token)
    guard response.status == 200, let data = response.json?["data"] as? [String: Any] else {
      return State(token: token)
    }
    return Self.state(token, ttl: data["ttl"] as? Int ?? 0, renewable: data["renewable"] as? Bool ?? false)
  }

  /// `auth/token/renew-self`.
  private func renew(_ token: String, using client: OpenBaoClient) throws(OpenBaoError) -> State {
    let response = try client.sendToCluster("POST", "auth/token/renew-self", body: Data("{}".utf8), token: token)
    guard response.status == 200, let auth = response.json?["auth"] as? [String: Any] else {
      throw .forbidden(path: "auth/token/renew-self", reason: response.errorText)
    }
    return Self.state(token, ttl: auth["lease_duration"] as? Int ?? 0, renewable: auth["renewable"] as? Bool ?? false)
  }

  /// `auth/approle/login`.
  private func logIn(roleID: String, secretID: String, using client: OpenBaoClient) throws(OpenBaoError) -> State {
    let body = (try? JSONSerialization.data(withJSONObject: ["role_id": roleID, "secret_id": secretID])) ?? Data()
    let response = try client.sendToCluster("POST", "auth/approle/login", body: body, token: nil)
    guard response.status == 200, let auth = response.json?["auth"] as? [String: Any],
      let token = auth["client_token"] as? String
    else { throw .forbidden(path: "auth/approle/login", reason: response.errorText) }
    return Self.state(token, ttl: auth["lease_duration"] as? Int ?? 0, renewable: auth["renewable"] as? Bool ?? false)
  }

  private static func state(_ token: String, ttl: Int, renewable: Bool) -> State {
    let renewAt = ttl > 0 ? ContinuousClock.now + .seconds(ttl) * 2 / 3 : nil
    return State(token: token, renewAt: renewAt, renewable: renewable)
  }
}
