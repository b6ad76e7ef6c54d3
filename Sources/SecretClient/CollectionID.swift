/// Names a collection of the Secret Service: by alias (`default`, `session`) or by object path.
public enum CollectionID: Sendable, Hashable {
  /// A collection by alias, such as `default` or `session`.
  case alias(String)
  /// A collection by D-Bus object path, such as `/org/freedesktop/secrets/collection/login`.
  case path(String)

  /// The collection where clients store by default; on secretd it is the in-memory session one.
  public static let `default` = CollectionID.alias("default")
  /// The collection that lasts for the login session only.
  public static let session = CollectionID.alias("session")

  /// Parses `default`, `session`, any alias name, or an object path starting with `/`.
  public init(_ text: String) {
    self = text.hasPrefix("/") ? .path(text) : .alias(text)
  }

  /// The object path calls can be sent to: an alias's own (`/org/freedesktop/secrets/aliases/NAME`),
  /// which the provider resolves on each call, or the collection's.
  var objectPath: String {
    switch self {
    case .alias(let name): "/org/freedesktop/secrets/aliases/" + name
    case .path(let path): path
    }
  }

  /// How errors name it: `alias NAME`, or the path.
  var errorName: String {
    switch self {
    case .alias(let name): "alias \(name)"
    case .path(let path): path
    }
  }

  /// The form libsecret accepts wherever a collection is named: an alias or a path.
  var libsecretName: String {
    switch self {
    case .alias(let name): name
    case .path(let path): path
    }
  }
}

extension CollectionID: CustomStringConvertible {
  /// The alias or the path, as ``init(_:)`` parses it back.
  public var description: String { libsecretName }
}
