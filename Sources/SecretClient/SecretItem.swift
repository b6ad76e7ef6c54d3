public import Foundation

/// What a search returns about one item: where it is, how it is labelled and found, and its
/// secret only when the search asked for secrets.
public struct SecretItem: Sendable, Hashable {
  public var path: String
  public var label: String
  public var attributes: [String: String]
  public var isLocked: Bool
  public var created: Date
  public var modified: Date
  /// `nil` unless the search was made with `includeSecrets: true` and the item is unlocked.
  public var secret: SecretValue?

  /// The object path of the collection that holds the item.
  public var collectionPath: String { SecretClient.collectionPath(ofItem: path) }
}

/// One collection of the Secret Service.
public struct CollectionInfo: Sendable, Hashable {
  public var path: String
  public var label: String
  public var isLocked: Bool
  public var itemCount: Int
}

/// A change to one item of a watched collection, as the provider signals it.
public struct ItemChange: Sendable, Hashable {
  public enum Kind: String, Sendable, Hashable {
    case created, changed, deleted
  }

  public var kind: Kind
  /// The object path of the item that changed.
  public var itemPath: String
}
