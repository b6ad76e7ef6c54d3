import CLibSecret

extension ServiceHandle {
  /// Asks the bus who owns `busName` and which process that is.
  /// Wraps `org.freedesktop.DBus.GetNameOwner` and `GetConnectionUnixProcessID`.
  func providerInfo() throws(SecretError) -> ProviderInfo {
    let owner = try callBus("GetNameOwner", argument: busName, replyType: "(s)")
    let uniqueName = stringChild(owner)
    g_variant_unref(owner)
    let pidReply = try? callBus("GetConnectionUnixProcessID", argument: uniqueName, replyType: "(u)")
    var pid: Int32?
    if let pidReply {
      let child = g_variant_get_child_value(pidReply, 0)
      pid = Int32(bitPattern: g_variant_get_uint32(child))
      g_variant_unref(child)
      g_variant_unref(pidReply)
    }
    return ProviderInfo(busName: busName, uniqueName: uniqueName, pid: pid, executable: pid.flatMap(Self.executable(of:)))
  }

  /// The attributes of one item, read with one `Properties.Get` call (no proxy object).
  func attributes(at path: String) throws(SecretError) -> [String: String] {
    var arguments: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.Secret.Item"), g_variant_new_string("Attributes")]
    let parameters = g_variant_new_tuple(&arguments, 2)
    let reply = try withVariantType("(v)") { (type) throws(SecretError) in
      try call(object: path) { error in
        g_dbus_connection_call_sync(
          connection, busName, path, "org.freedesktop.DBus.Properties", "Get", parameters, type,
          G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
      }
    }
    defer { g_variant_unref(reply) }
    let boxed = g_variant_get_child_value(reply, 0)
    defer { g_variant_unref(boxed) }
    let dictionary = g_variant_get_variant(boxed)
    defer { g_variant_unref(dictionary) }
    guard "a{ss}".withCString({ g_variant_is_of_type(dictionary, g_variant_type_checked_($0)) }) != 0 else {
      throw .dbus(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "the Attributes of \(path) are not a{ss}")
    }
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

  private func callBus(_ method: String, argument: String, replyType: String) throws(SecretError) -> OpaquePointer {
    var child: OpaquePointer? = g_variant_new_string(argument)
    let parameters = g_variant_new_tuple(&child, 1)
    return try withVariantType(replyType) { (type) throws(SecretError) in
      try call(object: busName) { error in
        g_dbus_connection_call_sync(
          connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
          parameters, type, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
      }
    }
  }

  private func stringChild(_ tuple: OpaquePointer) -> String {
    let child = g_variant_get_child_value(tuple, 0)
    defer { g_variant_unref(child) }
    return String(cString: g_variant_get_string(child, nil))
  }

  /// The program a process runs, from the first word of `/proc/PID/cmdline`.
  private static func executable(of pid: Int32) -> String? {
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
