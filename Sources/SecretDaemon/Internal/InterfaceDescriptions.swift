// The interfaces' introspection data, parsed once: what calls must look like, and the XML
// that Introspect answers. One description drives both.
import CLibSecret

/// Parsed introspection data. Wraps GDBusNodeInfo.
final class InterfaceDescriptions: @unchecked Sendable {
  // SAFETY: the GDBusNodeInfo and the tables derived from it are built in init and only read
  // afterwards; GLib's introspection structures are immutable once parsed.
  struct Property {
    let signature: String
    let readable: Bool
    let writable: Bool
  }

  private let node: UnsafeMutablePointer<GDBusNodeInfo>
  /// `interface → method → input tuple signature`, such as `(a{ss})`.
  private(set) var methods: [String: [String: String]] = [:]
  private(set) var properties: [String: [String: Property]] = [:]
  /// Property names in declaration order, for GetAll.
  private(set) var propertyNames: [String: [String]] = [:]
  /// Each interface's XML, indented for a `<node>`.
  private var interfaceXML: [String: String] = [:]

  /// Parses `xml` and reads every interface's methods and properties.
  /// Wraps g_dbus_node_info_new_for_xml and g_dbus_interface_info_generate_xml.
  init(xml: String) throws(GLibError) {
    var error: UnsafeMutablePointer<GError>?
    guard let node = g_dbus_node_info_new_for_xml(xml, &error) else {
      throw GLibError(consuming: error, operation: "parsing introspection XML")
    }
    self.node = node
    var interfaces = node.pointee.interfaces
    while let interface = interfaces?.pointee, let rawName = interface.pointee.name {
      let name = String(cString: rawName)
      methods[name] = Self.methods(of: interface)
      (properties[name], propertyNames[name]) = Self.properties(of: interface)
      let text = g_string_new(nil)
      g_dbus_interface_info_generate_xml(interface, 2, text)
      interfaceXML[name] = text.map { String(cString: $0.pointee.str) } ?? ""
      g_string_free(text, 1)
      interfaces = interfaces?.successor()
    }
  }

  deinit { g_dbus_node_info_unref(node) }

  /// The `Introspect` answer for an object implementing `interfaces`, with `children` below it.
  func introspection(interfaces: [String], children: [String]) -> String {
    var xml = """
      <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
      "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
      <node>

      """
    for interface in interfaces { xml += interfaceXML[interface] ?? "" }
    for child in children { xml += "  <node name=\"\(child)\"/>\n" }
    return xml + "</node>\n"
  }

  private static func methods(of interface: UnsafeMutablePointer<GDBusInterfaceInfo>) -> [String: String] {
    var result: [String: String] = [:]
    var list = interface.pointee.methods
    while let method = list?.pointee, let name = method.pointee.name {
      var signature = "("
      var arguments = method.pointee.in_args
      while let argument = arguments?.pointee, let type = argument.pointee.signature {
        signature += String(cString: type)
        arguments = arguments?.successor()
      }
      result[String(cString: name)] = signature + ")"
      list = list?.successor()
    }
    return result
  }

  private static func properties(
    of interface: UnsafeMutablePointer<GDBusInterfaceInfo>
  ) -> ([String: Property], [String]) {
    var table: [String: Property] = [:]
    var names: [String] = []
    var list = interface.pointee.properties
    while let property = list?.pointee, let rawName = property.pointee.name {
      let flags = property.pointee.flags.rawValue
      let name = String(cString: rawName)
      table[name] = Property(
        signature: property.pointee.signature.map { String(cString: $0) } ?? "",
        readable: flags & G_DBUS_PROPERTY_INFO_FLAGS_READABLE.rawValue != 0,
        writable: flags & G_DBUS_PROPERTY_INFO_FLAGS_WRITABLE.rawValue != 0)
      names.append(name)
      list = list?.successor()
    }
    return (table, names)
  }
}
