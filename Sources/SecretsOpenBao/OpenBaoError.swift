/// Why OpenBao could not be used. Messages say what to do and never quote a secret.
public enum OpenBaoError: Error, Sendable, Hashable, CustomStringConvertible {
  /// No server answered: down, unreachable, or refusing connections.
  case unreachable(addresses: [String], reason: String)
  /// Every server that answered is sealed.
  case sealed(address: String)
  /// The token's policy does not allow this.
  case forbidden(path: String, reason: String)
  /// There is no token to use; `reason` says why and what to do.
  case noToken(String)
  /// OpenBao refused the token or the login that gives it: `source` says where it came from,
  /// `advice` what to check there.
  case loginFailed(source: String, reason: String, advice: String)
  /// Someone else wrote the secret since this process read it (check-and-set failed); `version`
  /// is the newest one.
  case conflict(path: String, version: Int?)
  /// A write was sent and no server confirmed it (the one that had it died, and the cluster
  /// was still electing a leader when the request timeout ran out): it may have been stored.
  case writeUnconfirmed(path: String, reason: String)
  /// Any other answer.
  case server(status: Int, path: String, reason: String)

  /// What went wrong and what to do about it.
  public var description: String {
    switch self {
    case .unreachable(let addresses, let reason):
      "OpenBao cannot be reached at \(addresses.joined(separator: ", ")) (\(reason)); start the server or "
        + "set BAO_ADDR to one that answers"
    case .sealed(let address):
      "OpenBao at \(address) is sealed; unseal it (`bao operator unseal`) and try again"
    case .forbidden(let path, let reason):
      "OpenBao refused \(path) (\(reason)); the token works, but its policy does not allow this: give it a "
        + "policy that does"
    case .noToken(let reason):
      "no OpenBao token: \(reason)"
    case .loginFailed(let source, let reason, let advice):
      "OpenBao refused \(source) (\(reason)); \(advice)"
    case .conflict(let path, let version):
      "\(path) was changed by someone else (now version \(version.map(String.init) ?? "unknown")) since this "
        + "process read it; nothing was overwritten, the newer value is loaded: make the change again on it"
    case .writeUnconfirmed(let path, let reason):
      "the write to \(path) was sent but OpenBao did not confirm it (\(reason)): it may have been stored. A key's "
        + "next save recognises it as this process's own; elsewhere, read \(path) before writing again"
    case .server(let status, let path, let reason):
      "OpenBao answered \(status) for \(path) (\(reason))"
    }
  }
}
