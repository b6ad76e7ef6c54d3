// Every signal secretd sends, declared once: introspection lists each under its interface, and
// the outbox and the prompts send them by these declarations.

enum Signals {
  static let collectionCreated = collectionSignal("CollectionCreated")
  static let collectionDeleted = collectionSignal("CollectionDeleted")
  static let collectionChanged = collectionSignal("CollectionChanged")
  static let itemCreated = itemSignal("ItemCreated")
  static let itemDeleted = itemSignal("ItemDeleted")
  static let itemChanged = itemSignal("ItemChanged")
  static let promptCompleted = SignalDeclaration(
    Interfaces.prompt, "Completed", [Argument("dismissed", "b"), Argument("result", "v")])
  static let propertiesChanged = SignalDeclaration(
    Interfaces.properties, "PropertiesChanged",
    [
      Argument("interface_name", "s"), Argument("changed_properties", "a{sv}"),
      Argument("invalidated_properties", "as"),
    ])

  static let all = [
    collectionCreated, collectionDeleted, collectionChanged, itemCreated, itemDeleted, itemChanged, promptCompleted,
    propertiesChanged,
  ]

  private static func collectionSignal(_ name: String) -> SignalDeclaration {
    SignalDeclaration(Interfaces.service, name, [Argument("collection", "o")])
  }

  private static func itemSignal(_ name: String) -> SignalDeclaration {
    SignalDeclaration(Interfaces.collection, name, [Argument("item", "o")])
  }
}
