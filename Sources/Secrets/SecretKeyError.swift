/// Errors a ``SecretKey`` adds to `SecretError`.
public enum SecretKeyError: Error, Sendable, CustomStringConvertible {
  /// The item exists but its bytes are not the JSON of the declared type. The item is kept:
  /// before anything overwrites it, its bytes are copied to a backup item.
  case undecodable(SecretItemAddress, reason: String)

  /// Which item did not decode and why, without quoting its bytes, and what happens next.
  public var description: String {
    switch self {
    case .undecodable(let address, let reason):
      "The secret for \(address) is not valid JSON for this type (\(reason)). It is left as it "
        + "is; the next write keeps a copy in a backup item (attribute `backup`) first."
    }
  }
}
