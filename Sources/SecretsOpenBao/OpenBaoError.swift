/// Why OpenBao could not be used. Messages say what to do and never quote a secret.
public enum OpenBaoError: Error, Sendable, Hashable, CustomStringConvertible {
  /// No server answered: down, unreachable, or refusing connections.
  case unreachable(addresses: [String], reason: String)
  /// Every server that answered is sealed.
  case sealed(address: String)
  /// The token may not do this, or has expired and cannot be renewed.
  case forbidden(path: String, reason: String)
  /// There is no token to use.
  case noToken(String)
  /// Someone else wrote the secret since this process read it (check-and-set failed).
  case conflict(path: String, version: Int?)
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
      "OpenBao refused \(path) (\(reason)); give the token a policy that allows it, or a new token "
        + "(BAO_TOKEN, or `bao login`) if it has expired"
    case .noToken(let reason):
      "no OpenBao token: \(reason); set BAO_TOKEN, or configure a token file, the Secret Service or AppRole"
    case .conflict(let path, let version):
      "\(path) was changed by someone else (now version \(version.map(String.init) ?? "unknown")) since this "
        + "process read it; nothing was overwritten, the newer value is loaded: make the change again on it"
    case .server(let status, let path, let reason):
      "OpenBao answered \(status) for \(path) (\(reason))"
    }
  }
}
