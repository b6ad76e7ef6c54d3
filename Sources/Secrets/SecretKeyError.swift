/// Errors the keys of this module add to `SecretError`.
public enum SecretKeyError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The item exists but its bytes are not the JSON of the declared type. The item is kept:
  /// before anything overwrites it, its bytes are copied to a backup item.
  case undecodable(SecretItemAddress, reason: String)
  /// An item a query found is not the JSON of the type it asked for; the other items are given.
  case undecodableItem(path: String, reason: String)
  /// The environment's ``SecretKeyStore`` cannot search (OpenBao's), so a live query cannot run
  /// over it.
  case searchUnsupported

  /// Which item did not decode and why, without quoting its bytes, and what happens next.
  public var description: String {
    switch self {
    case .undecodable(let address, let reason):
      "The secret for \(address) is not valid JSON for this type (\(reason)). It is left as it "
        + "is; the next write keeps a copy in a backup item (attribute `backup`) first."
    case .undecodableItem(let path, let reason):
      "The secret of \(path) is not valid JSON for this type (\(reason)); the query gives the other items."
    case .searchUnsupported:
      "The environment's secretKeyStore cannot search (OpenBao's, or one made without `search:`): declare live "
        + "queries where it is the Secret Service or `.inMemory()`."
    }
  }
}
