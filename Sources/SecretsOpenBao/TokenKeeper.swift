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
  /// The time renewals are measured by (a test's own, to reach two thirds of a time to live).
  private let now: @Sendable () -> ContinuousClock.Instant

  init(_ source: OpenBaoAuthentication, now: @escaping @Sendable () -> ContinuousClock.Instant) {
    self.source = source
    self.now = now
  }

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
        guard let renewAt = state.renewAt, now() >= renewAt else { return token }
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
      guard let (_, token) = Self.environmentToken else {
        throw .noToken(
          "BAO_TOKEN and VAULT_TOKEN are not set; set BAO_TOKEN (`bao login`), or configure a token file, "
            + "the Secret Service or AppRole")
      }
      return token
    case .token(let token): return token
    case .tokenFile(let path): return try TokenFile.token(at: path)
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
      throw .noToken(
        "the Secret Service holds nothing for service \(service), account \(account); store it with "
          + "`secretctl set \(service) \(account)`")
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
    return makeState(token, ttl: data["ttl"] as? Int ?? 0, renewable: data["renewable"] as? Bool ?? false)
  }

  /// `auth/token/renew-self`.
  private func renew(_ token: String, using client: OpenBaoClient) throws(OpenBaoError) -> State {
    let response = try client.sendToCluster("POST", "auth/token/renew-self", body: Data("{}".utf8), token: token)
    guard response.status == 200, let auth = response.json?["auth"] as? [String: Any] else {
      throw refused(reason: response.errorText)
    }
    return makeState(token, ttl: auth["lease_duration"] as? Int ?? 0, renewable: auth["renewable"] as? Bool ?? false)
  }

  /// `auth/approle/login`.
  private func logIn(roleID: String, secretID: String, using client: OpenBaoClient) throws(OpenBaoError) -> State {
    let body = (try? JSONSerialization.data(withJSONObject: ["role_id": roleID, "secret_id": secretID])) ?? Data()
    let response = try client.sendToCluster("POST", "auth/approle/login", body: body, token: nil)
    guard response.status == 200, let auth = response.json?["auth"] as? [String: Any],
      let token = auth["client_token"] as? String
    else { throw refused(reason: response.errorText) }
    return makeState(token, ttl: auth["lease_duration"] as? Int ?? 0, renewable: auth["renewable"] as? Bool ?? false)
  }

  private func makeState(_ token: String, ttl: Int, renewable: Bool) -> State {
    let renewAt = ttl > 0 ? now() + .seconds(ttl) * 2 / 3 : nil
    return State(token: token, renewAt: renewAt, renewable: renewable)
  }

  // MARK: What to check when OpenBao refuses

  /// The error for a token (or a login) that OpenBao refused, naming where the token came from
  /// and what to check there.
  func refused(reason: String) -> OpenBaoError {
    switch source {
    case .environment:
      let name = Self.environmentToken?.name ?? "BAO_TOKEN"
      return .loginFailed(
        source: "the token in \(name)", reason: reason,
        advice: "it has expired, been revoked or is mistyped: set \(name) to a current token (`bao login`)")
    case .token:
      return .loginFailed(
        source: "the token the program gave", reason: reason,
        advice: "it has expired, been revoked or is mistyped: give the program a current token")
    case .tokenFile(let path):
      return .loginFailed(
        source: "the token in \(path)", reason: reason,
        advice: "check that what writes \(path) (an OpenBao agent's sink) runs and renews it, or put a current "
          + "token there")
    case .secretService(let service, let account, _):
      return .loginFailed(
        source: "the token kept in the Secret Service (service \(service), account \(account))", reason: reason,
        advice: "store a current token there with `secretctl set \(service) \(account)`")
    case .appRole(_, let secretID):
      let kept =
        switch secretID {
        case .value: "the secret id the program gave"
        case .secretService(let service, let account, _):
          "the secret id kept in the Secret Service (service \(service), account \(account))"
        }
      return .loginFailed(
        source: "the AppRole login (auth/approle/login)", reason: reason,
        advice: "check the role id and \(kept): a secret id expires and may be used a limited number of times "
          + "(a new one: `bao write -f auth/approle/role/ROLE/secret-id`), and AppRole must be enabled at "
          + "auth/approle")
    }
  }

  /// `BAO_TOKEN`, else `VAULT_TOKEN`, with its name; nil when neither is set.
  private static var environmentToken: (name: String, token: String)? {
    let environment = ProcessInfo.processInfo.environment
    for name in ["BAO_TOKEN", "VAULT_TOKEN"] {
      if let token = environment[name], !token.isEmpty { return (name, token) }
    }
    return nil
  }
}
