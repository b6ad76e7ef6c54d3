// The interfaces secretd serves, by name: the router's table, built from each object's
// declaration, from which calls are checked and dispatched and Introspect is answered.

enum Interfaces {
  static let service = "org.freedesktop.Secret.Service"
  static let collection = "org.freedesktop.Secret.Collection"
  static let item = "org.freedesktop.Secret.Item"
  static let session = "org.freedesktop.Secret.Session"
  static let prompt = "org.freedesktop.Secret.Prompt"
  static let properties = "org.freedesktop.DBus.Properties"
  static let introspectable = "org.freedesktop.DBus.Introspectable"
  static let peer = "org.freedesktop.DBus.Peer"
  /// What secretd adds, on the service object.
  static let secretd = "io.github.swiftsecrets.Secretd1"

  /// Every interface, by name.
  static let all: [String: DeclaredInterface] = Dictionary(
    uniqueKeysWithValues: [
      ServiceObject.declaration.erased, DaemonObject.declaration.erased, CollectionObject.declaration.erased,
      ItemObject.declaration.erased,
      SessionObject.declaration.erased, PromptObject.declaration.erased, AnyBusObject.properties.erased,
      AnyBusObject.introspectable.erased, AnyBusObject.peer.erased,
    ].map { ($0.name, $0) })

  /// The `Introspect` answer for an object implementing `interfaces`, with `children` below it.
  static func introspection(interfaces: [String], children: [String]) -> String {
    var xml = """
      <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
      "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
      <node>

      """
    for interface in interfaces { xml += all[interface]?.xml ?? "" }
    for child in children { xml += "  <node name=\"\(child)\"/>\n" }
    return xml + "</node>\n"
  }
}
