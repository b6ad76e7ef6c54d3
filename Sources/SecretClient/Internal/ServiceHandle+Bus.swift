import CLibSecret

extension ServiceHandle {
  /// The attributes of one item, read with one `Properties.Get` call (no proxy object).
  func attributes(at path: String) throws(SecretError) -> [String: String] {
    let dictionary = try property("Attributes", of: "org.freedesktop.Secret.Item", at: path, type: "a{ss}")
    defer { g_variant_unref(dictionary) }
    var attributes: [String: String] = [:]
    for index in 0..<g_variant_n_children(dictionary) {
      let entry = g_variant_get_child_value(dictionary, index)
      let key = g_variant_get_child_value(entry, 0)
      let value = g_variant_get_child_value(entry, 1)
      attributes[String(cString: g_variant_get_string(key, nil))] = String(cString: g_variant_get_string(value, nil))
      [value, key, entry].forEach { g_variant_unref($0) }
    }
    return attributes
  }

  /// One property as the provider has it now, read with `Properties.Get`, checked to be of
  /// `type`; the caller releases it.
  ///
  /// Properties are read this way rather than from libsecret's proxies: a proxy's cache is kept
  /// current only by signals delivered on the GLib main context that was the thread default when
  /// it was made, and nothing iterates that context in a Swift process.
  func property(_ name: String, of interface: String, at path: String, type: String) throws(SecretError)
    -> OpaquePointer
  {
    var arguments: [OpaquePointer?] = [g_variant_new_string(interface), g_variant_new_string(name)]
    let reply = try callObject(
      path, "org.freedesktop.DBus.Properties", "Get", g_variant_new_tuple(&arguments, 2), replyType: "(v)")
    defer { g_variant_unref(reply) }
    let boxed = g_variant_get_child_value(reply, 0)
    defer { g_variant_unref(boxed) }
    guard let value = g_variant_get_variant(boxed) else {
      throw .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "no value for the \(name) of \(path)")
    }
    guard type.withCString({ g_variant_is_of_type(value, g_variant_type_checked_($0)) }) != 0 else {
      g_variant_unref(value)
      throw .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "the \(name) of \(path) is not \(type)")
    }
    return value
  }

  /// Every property of `interface` at `path` (an `a{sv}`), read with one `Properties.GetAll`;
  /// the caller releases it.
  func allProperties(of interface: String, at path: String) throws(SecretError) -> OpaquePointer {
    var argument: OpaquePointer? = g_variant_new_string(interface)
    let reply = try callObject(
      path, "org.freedesktop.DBus.Properties", "GetAll", g_variant_new_tuple(&argument, 1), replyType: "(a{sv})")
    defer { g_variant_unref(reply) }
    return g_variant_get_child_value(reply, 0)
  }

  /// Calls a method of the provider's object at `path` (of the provider with the unique name
  /// `destination`, when given); errors name `about`, or the path.
  func callObject(
    _ path: String, _ interface: String, _ method: String, _ parameters: OpaquePointer, replyType: String,
    destination: String? = nil, about: String? = nil
  ) throws(SecretError) -> OpaquePointer {
    try callMethod(
      destination: destination ?? busName, path, interface, method, parameters, replyType: replyType,
      about: about ?? path)
  }

  /// Calls a method of the bus daemon itself with one string argument.
  func callBus(_ method: String, argument: String, replyType: String) throws(SecretError) -> OpaquePointer {
    var child: OpaquePointer? = g_variant_new_string(argument)
    return try callMethod(
      destination: "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
      g_variant_new_tuple(&child, 1), replyType: replyType, about: busName)
  }

  private func callMethod(
    destination: String, _ path: String, _ interface: String, _ method: String, _ parameters: OpaquePointer,
    replyType: String, about object: String
  ) throws(SecretError) -> OpaquePointer {
    try withVariantType(replyType) { (type) throws(SecretError) in
      try call(object: object) { error in
        g_dbus_connection_call_sync(
          connection, destination, path, interface, method, parameters, type, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
      }
    }
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
