import CLibSecret
import GLibBridge

extension ServiceHandle {
  /// The attributes of one item, read with one `Properties.Get` call (no proxy object).
  func attributes(at path: String) throws(SecretError) -> [String: String] {
    try property("Attributes", of: "org.freedesktop.Secret.Item", at: path, type: "a{ss}").stringDictionary ?? [:]
  }

  /// One property as the provider has it now, read with `Properties.Get`, checked to be of
  /// `type`.
  ///
  /// Properties are read this way rather than from libsecret's proxies: a proxy's cache is kept
  /// current only by signals delivered on the GLib main context that was the thread default when
  /// it was made, and nothing iterates that context in a Swift process.
  func property(_ name: String, of interface: String, at path: String, type: String) throws(SecretError)
    -> Variant
  {
    let reply = try callObject(
      path, "org.freedesktop.DBus.Properties", "Get", .tuple([.string(interface), .string(name)]), replyType: "(v)")
    guard let value = reply.child(0)?.unboxed else {
      throw .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "no value for the \(name) of \(path)")
    }
    guard value.isOfType(type) else {
      throw .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "the \(name) of \(path) is not \(type)")
    }
    return value
  }

  /// Every property of `interface` at `path`, read with one `Properties.GetAll`.
  func allProperties(of interface: String, at path: String) throws(SecretError) -> [String: Variant] {
    let reply = try callObject(
      path, "org.freedesktop.DBus.Properties", "GetAll", .tuple([.string(interface)]), replyType: "(a{sv})")
    return reply.child(0)?.variantDictionary ?? [:]
  }

  /// Calls a method of the provider's object at `path` (of the provider with the unique name
  /// `destination`, when given), waiting `timeout` milliseconds at most (-1: GDBus's 25 s);
  /// errors name `about`, or the path, unless `refusal` reads them itself.
  func callObject(
    _ path: String, _ interface: String, _ method: String, _ arguments: DBusValue, replyType: String,
    destination: String? = nil, about: String? = nil, timeout: Int32 = -1,
    refusal: ((GLibError) -> SecretError)? = nil
  ) throws(SecretError) -> Variant {
    try callMethod(
      destination: destination ?? busName, path, interface, method, arguments, replyType: replyType,
      about: about ?? path, timeout: timeout, refusal: refusal)
  }

  private func callMethod(
    destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: DBusValue,
    replyType: String, about object: String, timeout: Int32 = -1, refusal: ((GLibError) -> SecretError)? = nil
  ) throws(SecretError) -> Variant {
    var error: UnsafeMutablePointer<GError>?
    let reply = try withVariantType(replyType) { (type) throws(SecretError) in
      g_dbus_connection_call_sync(
        connection, destination, path, interface, method, arguments.makeFloating(), type, G_DBUS_CALL_FLAGS_NONE,
        timeout, nil, &error)
    }
    guard let reply, error == nil else {
      let failure = GLibError(consuming: error)
      throw refusal?(failure) ?? SecretError(failure, busName: busName, object: object)
    }
    return Variant(adopting: reply)
  }

  /// The program a process runs, from the first word of `/proc/PID/cmdline`.
  static func executable(of pid: Int32) -> String? {
    guard let contents = readFile(path: "/proc/\(pid)/cmdline") else { return nil }
    let program = contents.prefix { $0 != 0 }
    return program.isEmpty ? nil : String(decoding: program, as: UTF8.self)
  }

  private static func readFile(path: String) -> [UInt8]? {
    var contents: UnsafeMutablePointer<gchar>?
    var length: gsize = 0
    guard g_file_get_contents(path, &contents, &length, nil) != 0, let contents else { return nil }
    defer { g_free(contents) }
    return Array(UnsafeRawBufferPointer(start: contents, count: Int(length)))
  }
}
