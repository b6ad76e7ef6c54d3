// Every signal secretd sends, declared once: introspection lists each under its interface, and
// the outbox and the prompts send them by these cases, so none leaves undeclared.

enum BusSignal: CaseIterable, Sendable {
  case collectionCreated, collectionDeleted, collectionChanged
  case itemCreated, itemDeleted, itemChanged
  case promptCompleted
  case propertiesChanged

  var interface: String {
    switch self {
    case .collectionCreated, .collectionDeleted, .collectionChanged: Interfaces.service
    case .itemCreated, .itemDeleted, .itemChanged: Interfaces.collection
    case .promptCompleted: Interfaces.prompt
    case .propertiesChanged: Interfaces.properties
    }
  }

  var name: String {
    switch self {
    case .collectionCreated: "CollectionCreated"
    case .collectionDeleted: "CollectionDeleted"
    case .collectionChanged: "CollectionChanged"
    case .itemCreated: "ItemCreated"
    case .itemDeleted: "ItemDeleted"
    case .itemChanged: "ItemChanged"
    case .promptCompleted: "Completed"
    case .propertiesChanged: "PropertiesChanged"
    }
  }

  var arguments: [Argument] {
    switch self {
    case .collectionCreated, .collectionDeleted, .collectionChanged: [Argument("collection", "o")]
    case .itemCreated, .itemDeleted, .itemChanged: [Argument("item", "o")]
    case .promptCompleted: [Argument("dismissed", "b"), Argument("result", "v")]
    case .propertiesChanged:
      [
        Argument("interface_name", "s"), Argument("changed_properties", "a{sv}"),
        Argument("invalidated_properties", "as"),
      ]
    }
  }

  /// The tuple type of the signal's body, such as `(o)`.
  var signature: String { "(" + arguments.map(\.type).joined() + ")" }
}
