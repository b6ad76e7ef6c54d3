// Serving method calls on GDBus's worker thread, through a message filter.
//
// Why: a call dispatched through a registered subtree crosses threads twice in the daemon (GDBus's
// worker thread reads it and wakes the main context, whose reply wakes the worker again to write
// it). Profiles of the lookup benchmark showed ~90% of the daemon's CPU in that hand-off (futex
// and poll wake-ups, context switches) and ~7% in secretd's own code. A filter runs on the
// worker thread as the message is read, and a reply sent from there is written by the same
// thread, so a call costs one wake-up.
//
// Scope: the filter answers the Secret Service interfaces' methods and Properties.Get/GetAll/Set
// on them, only after checking them as GDBus would (object implements the interface, method or
// property exists, arguments have the declared type). Everything else (Introspect, Peer, calls
// that GDBus answers with an error) is passed on to the registered subtrees on the main context.
import CLibSecret

/// Method and property shapes by interface, read once from the introspection data.
struct InterfaceShapes {
  struct Property {
    let signature: String
    let readable: Bool
    let writable: Bool
  }

  /// `interface → method → input tuple signature`, such as `(a{ss})`.
  var methods: [String: [String: String]] = [:]
  var properties: [String: [String: Property]] = [:]
  /// Property names in declaration order, for GetAll.
  var propertyNames: [String: [String]] = [:]

  /// Walks the GDBusNodeInfo's interfaces, methods and properties.
  init(_ node: UnsafeMutablePointer<GDBusNodeInfo>) {
    var interfaces = node.pointee.interfaces
    while let interface = interfaces?.pointee, let interfaceName = interface.pointee.name {
      let name = String(cString: interfaceName)
      var methodMap: [String: String] = [:]
      var methodList = interface.pointee.methods
      while let method = methodList?.pointee, let methodName = method.pointee.name {
        var signature = "("
        var arguments = method.pointee.in_args
        while let argument = arguments?.pointee, let type = argument.pointee.signature {
          signature += String(cString: type)
          arguments = arguments?.successor()
        }
        methodMap[String(cString: methodName)] = signature + ")"
        methodList = methodList?.successor()
      }
      methods[name] = methodMap
      var propertyMap: [String: Property] = [:]
      var names: [String] = []
      var propertyList = interface.pointee.properties
      while let property = propertyList?.pointee, let propertyName = property.pointee.name {
        let flags = property.pointee.flags.rawValue
        let key = String(cString: propertyName)
        propertyMap[key] = Property(
          signature: property.pointee.signature.map { String(cString: $0) } ?? "",
          readable: flags & G_DBUS_PROPERTY_INFO_FLAGS_READABLE.rawValue != 0,
          writable: flags & G_DBUS_PROPERTY_INFO_FLAGS_WRITABLE.rawValue != 0)
        names.append(key)
        propertyList = propertyList?.successor()
      }
      properties[name] = propertyMap
      propertyNames[name] = names
      interfaces = interfaces?.successor()
    }
  }
}

/// What the filter needs: the tree to call, the root it serves, and the shapes to check calls against.
final class WorkerDispatch {
  let root: String
  /// Weak: a message may still reach the filter while the daemon is being torn down.
  weak var tree: (any ObjectTree)?
  let shapes: InterfaceShapes

  init(root: String, tree: any ObjectTree, shapes: InterfaceShapes) {
    self.root = root
    self.tree = tree
    self.shapes = shapes
  }

  /// Handles `message` if it is a call this filter answers; false leaves it to GDBus.
  func handle(_ message: OpaquePointer, connection: OpaquePointer) -> Bool {
    guard let tree else { return false }
    guard g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_METHOD_CALL,
      let rawPath = g_dbus_message_get_path(message), let rawInterface = g_dbus_message_get_interface(message),
      let rawMember = g_dbus_message_get_member(message)
    else { return false }
    let path = String(cString: rawPath)
    guard path == root || path.hasPrefix(root + "/") else { return false }
    let interface = String(cString: rawInterface)
    let member = String(cString: rawMember)
    let body: Variant
    if let raw = g_dbus_message_get_body(message) {
      body = Variant(borrowing: raw)
    } else {
      body = Variant(adopting: DBusValue.tuple([]).makeFloating())
    }
    let signature = body.typeString
    let sender = g_dbus_message_get_sender(message).map { String(cString: $0) } ?? ""

    if interface == Interfaces.properties {
      return handleProperties(tree, member, body, signature, path: path, message: message, connection: connection)
    }
    guard shapes.methods[interface]?[member] == signature, tree.interfaces(at: path)?.contains(interface) == true
    else { return false }
    tree.call(
      path: path, interface: interface, method: member, parameters: body, sender: sender,
      invocation: MethodInvocation(message: message, connection: connection))
    return true
  }

  private func handleProperties(
    _ tree: any ObjectTree, _ member: String, _ body: Variant, _ signature: String, path: String, message: OpaquePointer,
    connection: OpaquePointer
  ) -> Bool {
    guard let interface = body.child(0)?.string, let properties = shapes.properties[interface],
      tree.interfaces(at: path)?.contains(interface) == true
    else { return false }
    let invocation: MethodInvocation
    switch (member, signature) {
    case ("Get", "(ss)"):
      guard let name = body.child(1)?.string, properties[name]?.readable == true else { return false }
      invocation = MethodInvocation(message: message, connection: connection)
      do throws(DBusError) {
        let values = try tree.properties(path: path, interface: interface, names: [name])
        invocation.reply(.tuple(values.map(DBusValue.variant)))
      } catch {
        invocation.fail(error)
      }
    case ("GetAll", "(s)"):
      invocation = MethodInvocation(message: message, connection: connection)
      let names = (shapes.propertyNames[interface] ?? []).filter { properties[$0]?.readable == true }
      do throws(DBusError) {
        let values = try tree.properties(path: path, interface: interface, names: names)
        let entries = zip(names, values).map { DBusValue.dictEntry(.string($0), .variant($1)) }
        invocation.reply(.tuple([.array(elementType: "{sv}", entries)]))
      } catch {
        invocation.fail(error)
      }
    case ("Set", "(ssv)"):
      guard let name = body.child(1)?.string, let property = properties[name], property.writable,
        let value = body.child(2)?.unboxed, value.typeString == property.signature
      else { return false }
      invocation = MethodInvocation(message: message, connection: connection)
      tree.setProperty(path: path, interface: interface, name: name, value: value) { result in
        switch result {
        case .success: invocation.reply(.tuple([]))
        case .failure(let error): invocation.fail(error)
        }
      }
    default:
      return false
    }
    return true
  }
}

/// The filter GDBus calls on its worker thread for every message; consumed calls return nil.
private func filterMessage(
  _ connection: OpaquePointer?, _ message: OpaquePointer?, _ incoming: gboolean, _ userData: gpointer?
) -> OpaquePointer? {
  guard incoming != 0, let connection, let message, let userData else { return message }
  let dispatch = Unmanaged<WorkerDispatch>.fromOpaque(userData).takeUnretainedValue()
  guard dispatch.handle(message, connection: connection) else { return message }
  // The filter owns `message` (transfer full); dropping it means releasing it.
  g_object_unref(UnsafeMutableRawPointer(message))
  return nil
}

extension BusConnection {
  /// Answers calls on `root` and below from GDBus's worker thread, before subtree dispatch.
  /// `tree` must serialise its own state: its other callbacks run on the main context.
  /// Wraps g_dbus_connection_add_filter.
  func serveOnWorkerThread(root: String, tree: any ObjectTree, descriptions: InterfaceDescriptions) {
    let dispatch = WorkerDispatch(root: root, tree: tree, shapes: descriptions.shapes)
    let id = g_dbus_connection_add_filter(
      raw, filterMessage, Unmanaged.passRetained(dispatch).toOpaque(),
      { userData in
        guard let userData else { return }
        Unmanaged<WorkerDispatch>.fromOpaque(userData).release()
      })
    addFilterID(id)
  }
}
