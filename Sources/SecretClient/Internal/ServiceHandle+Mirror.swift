// The connection's item mirror (ItemMirror.swift), fed by a GDBus message filter: the filter
// sees every message on GDBus's reading thread, in the order it came, before any answer after it
// reaches its caller. secretd sends its signals to every client it serves; for providers that
// broadcast them (gnome-keyring) the connection adds match rules. It starts on a connection's
// second call by address, so that a one-shot program pays nothing for it.
import CLibSecret
import GLibBridge

extension ServiceHandle {
  /// Counts a call by address on this connection; the second one starts the mirror, which
  /// keeps what calls learn from then on.
  func countAddressCall() throws(SecretError) {
    let count = addressCalls.withLock { count in
      count += 1
      return count
    }
    if count == 2 { try startMirror() }
  }

  /// Installs the filter, asks the bus for the provider's signals, and believes those of the
  /// provider the bus says runs as this user. Wraps `g_dbus_connection_add_filter`.
  private func startMirror() throws(SecretError) {
    // The session's provider only once the bus has vouched for it.
    let provider: String
    if let session = transfer.withLock({ $0 }) {
      try vouch(for: session)
      provider = session.provider
    } else {
      provider = try trustedProvider()
    }
    let data = Unmanaged.passRetained(mirror).toOpaque()
    let id = g_dbus_connection_add_filter(
      connection,
      { _, message, incoming, data in
        guard incoming != 0, let message, let data,
          g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_SIGNAL,
          let event = itemEvent(in: message)
        else { return message }
        let sender = g_dbus_message_get_sender(message).map { String(cString: $0) }
        Unmanaged<ItemMirror>.fromOpaque(data).takeUnretainedValue().receive(event, from: sender)
        return message
      }, data, { data in if let data { Unmanaged<ItemMirror>.fromOpaque(data).release() } })
    mirrorFilter.withLock { $0 = id }
    for rule in mirrorRules { addMatch(rule) }
    mirror.activate(provider: provider, busName: busName)
  }

  /// The signals the mirror reads, for providers that broadcast them.
  private var mirrorRules: [String] {
    let sender = "type='signal',sender='\(busName)'"
    return [
      "\(sender),interface='org.freedesktop.Secret.Collection'",
      "\(sender),interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
        + "arg0='org.freedesktop.Secret.Item'",
      "\(sender),interface='org.freedesktop.Secret.Service',member='CollectionDeleted'",
      "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
        + "arg0='\(busName)'",
    ]
  }

  /// Sends `AddMatch` without waiting: the bus takes it before any later call of this
  /// connection. Wraps `g_dbus_connection_call` with no callback (no reply expected).
  private func addMatch(_ rule: String) {
    g_dbus_connection_call(
      connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch",
      DBusValue.tuple([.string(rule)]).makeFloating(), nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, nil, nil)
  }

  /// Removes the filter; GDBus releases the mirror once no filter call can still use it.
  /// Wraps `g_dbus_connection_remove_filter`.
  func stopMirror() {
    guard let id = mirrorFilter.withLock({ $0 }) else { return }
    g_dbus_connection_remove_filter(connection, id)
  }
}

/// What a signal says about items, if it is one the mirror reads. Runs on GDBus's reading
/// thread for every signal: the header is compared in place, and only what the mirror keeps
/// is copied out.
private func itemEvent(in message: OpaquePointer) -> ItemEvent? {
  let interface = g_dbus_message_get_interface(message)
  let member = g_dbus_message_get_member(message)
  guard let body = g_dbus_message_get_body(message) else { return nil }
  if matches(interface, "org.freedesktop.Secret.Collection") {
    guard let path = onlyString(of: body, type: "(o)") else { return nil }
    if matches(member, "ItemCreated") { return .created(path) }
    if matches(member, "ItemChanged") { return .changed(path) }
    if matches(member, "ItemDeleted") { return .deleted(path) }
    return nil
  }
  if matches(interface, "org.freedesktop.DBus.Properties"), matches(member, "PropertiesChanged"),
    let path = g_dbus_message_get_path(message)
  {
    return itemProperties(Variant(borrowing: body), of: String(cString: path))
  }
  if matches(interface, "org.freedesktop.Secret.Service"), matches(member, "CollectionDeleted") {
    return .collectionDeleted
  }
  if matches(interface, "org.freedesktop.DBus"), matches(member, "NameOwnerChanged") {
    let names = Variant(borrowing: body)
    guard names.isOfType("(sss)"), let name = names.child(0)?.string, let owner = names.child(1)?.string else {
      return nil
    }
    return .ownerLeft(name: name, owner: owner)
  }
  return nil
}

/// Whether a header field is `name` (a literal: compared in place, nothing copied). Wraps strcmp.
private func matches(_ field: UnsafePointer<gchar>?, _ name: String) -> Bool {
  field.map { strcmp($0, name) == 0 } ?? false
}

/// The string of a body of one string or object path. Wraps g_variant_get_child_value.
private func onlyString(of body: OpaquePointer, type: String) -> String? {
  guard type.withCString({ g_variant_is_of_type(body, g_variant_type_checked_($0)) }) != 0,
    let child = g_variant_get_child_value(body, 0)
  else { return nil }
  defer { g_variant_unref(child) }
  return String(cString: g_variant_get_string(child, nil))
}

/// An item's `PropertiesChanged`: its new attributes, or that they changed. Only the
/// `Attributes` entry is read. Wraps g_variant_lookup_value.
private func itemProperties(_ body: Variant, of path: String) -> ItemEvent? {
  guard body.isOfType("(sa{sv}as)"), body.child(0)?.string == "org.freedesktop.Secret.Item",
    let changed = body.child(1)
  else { return nil }
  let attributes = "a{ss}".withCString { type in
    g_variant_lookup_value(changed.raw, "Attributes", g_variant_type_checked_(type))
  }
  if let attributes { return Variant(adopting: attributes).stringDictionary.map { .attributes(path, $0) } }
  return body.child(2)?.strings?.contains("Attributes") == true ? .changed(path) : nil
}
