public import Foundation

/// What a live query (`.secretItems(matching:in:refreshWindow:)`) tells of one
/// item: where it is, how it is labelled and found, when it changed and whether it is locked;
/// never its secret.
public struct SecretItemInfo: Hashable, Sendable, Identifiable {
  /// The item's D-Bus object path, unique while the item exists.
  public var path: String
  /// What keyring managers show for the item; empty when it has none.
  public var label: String
  /// The attributes the item is found by, such as `service` and `account`.
  public var attributes: [String: String]
  /// The object path of the collection that holds the item.
  public var collectionPath: String
  /// Whether the item was locked when it was last searched.
  public var isLocked: Bool
  /// When the item was created, to the second, as the provider reports it.
  public var created: Date
  /// When the item was last modified, to the second, as the provider reports it.
  public var modified: Date

  /// The item's object path.
  public var id: String { path }

  /// An item's description from its parts, for the ``SecretSearch`` of a store of your own.
  ///
  /// - Parameters:
  ///   - path: A path that names the item while it exists.
  ///   - label: What keyring managers show for it.
  ///   - attributes: The attributes it is found by.
  ///   - collectionPath: The path of its collection.
  ///   - isLocked: Whether it is locked.
  ///   - created: When it was created.
  ///   - modified: When it was last modified.
  public init(
    path: String, label: String, attributes: [String: String], collectionPath: String, isLocked: Bool,
    created: Date, modified: Date
  ) {
    self.path = path
    self.label = label
    self.attributes = attributes
    self.collectionPath = collectionPath
    self.isLocked = isLocked
    self.created = created
    self.modified = modified
  }

  /// The order of a query's items: by label, then by path (so items with one label keep their
  /// places from one search to the next).
  static func inQueryOrder(_ first: Self, _ second: Self) -> Bool {
    first.label != second.label ? first.label < second.label : first.path < second.path
  }
}

/// One item of `.secretValues(matching:in:as:refreshWindow:)`: its description
/// and its secret decoded from JSON, or why it did not decode.
public struct SecretItemValue<Value: Sendable>: Sendable, Identifiable {
  /// The item.
  public var item: SecretItemInfo
  /// The item's secret as a `Value`; `nil` when it is not JSON of that type.
  public var value: Value?
  /// Why the secret did not decode (naming fields, never quoting the secret); `nil` when it did.
  public var decodingError: SecretKeyError?

  /// The item's object path.
  public var id: String { item.path }
}

extension SecretItemValue: Equatable where Value: Equatable {}
extension SecretItemValue: Hashable where Value: Hashable {}
