/// Why a `.credential(_:)` key could not give its credential. Every message names the
/// credential and, but for an invalid name, its file; none quotes the contents.
public enum CredentialKeyError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The name is not one systemd accepts in `LoadCredential=`, so no file can be read.
  case invalidName(String)
  /// The file exists but could not be read: its permissions, a folder or a pipe in its place,
  /// or a failed system call (`reason` says which).
  case unreadable(name: String, path: String, reason: String)
  /// The file was read but is not a value of the declared type: not UTF-8 for a `String`, not
  /// JSON of the type for anything else.
  case undecodable(name: String, path: String, reason: String)

  /// The credential's name.
  public var name: String {
    switch self {
    case .invalidName(let name), .unreadable(let name, _, _), .undecodable(let name, _, _): name
    }
  }

  /// What failed, on which file, and what to do about it.
  public var description: String {
    switch self {
    case .invalidName(let name):
      "\(String(reflecting: name)) is not a systemd credential name: use 1 to 255 printable ASCII characters "
        + "other than \"/\" and \":\", neither \".\" nor \"..\"."
    case .unreadable(let name, let path, let reason):
      "Could not read credential \(String(reflecting: name)) at \(path): \(reason)"
    case .undecodable(let name, let path, let reason):
      "Credential \(String(reflecting: name)) at \(path) is \(reason). Store it again in the form the service "
        + "expects (`secretctl credential set \(name)` for secretd's)."
    }
  }
}
