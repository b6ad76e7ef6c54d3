// Object paths: building them and resolving them, aliases included.

enum ObjectPaths {
  static let root = "/org/freedesktop/secrets"
  static let collections = root + "/collection"
  static let aliases = root + "/aliases"
  static let sessions = root + "/session"
  static let prompts = root + "/prompt"
  /// "No prompt needed" and "no object".
  static let none = "/"

  static func collection(_ name: String) -> String { collections + "/" + name }
  static func item(_ reference: ItemReference) -> String { collection(reference.collection) + "/\(reference.item)" }
  static func alias(_ name: String) -> String { aliases + "/" + name }
  static func session(_ number: Int) -> String { sessions + "/s\(number)" }
  static func prompt(_ number: Int) -> String { prompts + "/p\(number)" }

  /// The one path that names `node` (aliases stay aliases).
  static func canonical(_ node: ObjectNode) -> String {
    switch node {
    case .service: root
    case .container(let name): root + "/" + name
    case .collection(.named(let name)): collection(name)
    case .collection(.alias(let name)): alias(name)
    case .item(.named(let name), let number): collection(name) + "/\(number)"
    case .item(.alias(let name), let number): alias(name) + "/\(number)"
    case .session(let number): session(number)
    case .prompt(let number): prompt(number)
    }
  }
}

/// What an object path names, before checking that it exists. Numbers in paths are canonical:
/// `/collection/session/7` names an item, `/collection/session/07` and `/collection/session/+7`
/// name nothing.
enum ObjectNode: Equatable {
  case service
  /// `collection`, `aliases`, `session`, `prompt`: containers without interfaces.
  case container(String)
  /// A collection by name (`/collection/NAME`) or by alias (`/aliases/NAME`).
  case collection(CollectionName)
  case item(CollectionName, Int)
  case session(Int)
  case prompt(Int)

  enum CollectionName: Equatable {
    case named(String)
    case alias(String)
  }

  /// Parses `path`; nil for anything outside the Secret Service tree.
  init?(path: String) {
    if path == ObjectPaths.root {
      self = .service
      return
    }
    guard path.hasPrefix(ObjectPaths.root + "/") else { return nil }
    let parts = path.dropFirst(ObjectPaths.root.count + 1).split(separator: "/", omittingEmptySubsequences: false)
      .map(String.init)
    switch (parts.count, parts.first) {
    case (1, "collection"?), (1, "aliases"?), (1, "session"?), (1, "prompt"?):
      self = .container(parts[0])
    case (2, "collection"?): self = .collection(.named(parts[1]))
    case (2, "aliases"?): self = .collection(.alias(parts[1]))
    case (3, "collection"?):
      guard let number = Self.number(parts[2]) else { return nil }
      self = .item(.named(parts[1]), number)
    case (3, "aliases"?):
      guard let number = Self.number(parts[2]) else { return nil }
      self = .item(.alias(parts[1]), number)
    case (2, "session"?):
      guard parts[1].hasPrefix("s"), let number = Self.number(parts[1].dropFirst()) else { return nil }
      self = .session(number)
    case (2, "prompt"?):
      guard parts[1].hasPrefix("p"), let number = Self.number(parts[1].dropFirst()) else { return nil }
      self = .prompt(number)
    default:
      return nil
    }
  }

  /// A positive decimal number written the one way it prints: no sign, no leading zeros.
  private static func number(_ text: some StringProtocol) -> Int? {
    guard let number = Int(text), number > 0, String(number) == text else { return nil }
    return number
  }

  /// Every interface the object answers on: its Secret Service interface and the standard ones.
  var allInterfaces: [String] {
    switch self {
    case .container: Self.containerInterfaces
    case .service: Self.serviceInterfaces
    case .collection: Self.collectionInterfaces
    case .item: Self.itemInterfaces
    case .session: Self.sessionInterfaces
    case .prompt: Self.promptInterfaces
    }
  }

  private static let standard = [Interfaces.properties, Interfaces.introspectable, Interfaces.peer]
  private static let containerInterfaces = [Interfaces.introspectable, Interfaces.peer]
  private static let serviceInterfaces = [Interfaces.service, Interfaces.secretd] + standard
  private static let collectionInterfaces = [Interfaces.collection] + standard
  private static let itemInterfaces = [Interfaces.item] + standard
  private static let sessionInterfaces = [Interfaces.session] + standard
  private static let promptInterfaces = [Interfaces.prompt] + standard
}
