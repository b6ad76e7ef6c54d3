// FoundationEssentials, not Foundation: `Date` is the same type in both, and this module does not
// pull CoreFoundation and ICU into every program that links it (secretctl starts faster).
public import FoundationEssentials

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

/// Who provides the Secret Service on the bus.
public struct ProviderInfo: Sendable, Hashable {
  /// The well-known name clients use, normally `org.freedesktop.secrets`.
  public var busName: String
  /// The owner's unique connection name, such as `:1.42`.
  public var uniqueName: String
  /// The owner's process id, when the bus tells it.
  public var pid: Int32?
  /// The program the owner runs (`/usr/bin/gnome-keyring-daemon`, `secretd`, …), when readable.
  public var executable: String?

  /// Whether the provider is this project's secretd, which honours item expiry.
  public var isSecretd: Bool {
    executable.map { $0 == "secretd" || $0.hasSuffix("/secretd") } ?? false
  }
}
