// Bounds on what clients may store, each named by the flag that changes it.

/// Bounds on secrets, attributes and item counts.
public struct Limits: Sendable, Equatable {
  /// Largest secret in bytes (`--max-secret-size`).
  public var maxSecretSize: Int
  /// Most attributes on one item (`--max-attributes`).
  public var maxAttributes: Int
  /// Longest attribute name or value, or label, in bytes (`--max-attribute-length`).
  public var maxAttributeLength: Int
  /// Most items across all collections (`--max-items`).
  public var maxItems: Int
  /// Most open transfer sessions per client connection (`--max-sessions`).
  public var maxSessionsPerClient: Int

  public init(
    maxSecretSize: Int = 1 << 20, maxAttributes: Int = 64, maxAttributeLength: Int = 4096,
    maxItems: Int = 100_000, maxSessionsPerClient: Int = 1024
  ) {
    self.maxSecretSize = maxSecretSize
    self.maxAttributes = maxAttributes
    self.maxAttributeLength = maxAttributeLength
    self.maxItems = maxItems
    self.maxSessionsPerClient = maxSessionsPerClient
  }
}

/// Which bound a request exceeded.
enum Limit: String, Sendable {
  case secretSize = "--max-secret-size"
  case attributes = "--max-attributes"
  case attributeLength = "--max-attribute-length"
  case items = "--max-items"
  case sessions = "--max-sessions"

  var what: String {
    switch self {
    case .secretSize: "secret size in bytes"
    case .attributes: "attributes per item"
    case .attributeLength: "attribute or label length in bytes"
    case .items: "number of items"
    case .sessions: "open sessions per client"
    }
  }
}
