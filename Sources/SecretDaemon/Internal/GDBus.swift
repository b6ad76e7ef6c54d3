// GDBus wrappers: connections, name ownership, signals, subtree registration, invocations.
import CLibSecret
import Synchronization

/// A D-Bus error reply, by the name clients match on.
struct DBusError: Error, Equatable {
  let name: String
  let message: String
}

/// A failure of GIO itself (a `GError`), keeping its domain, code and text.
public struct GIOError: Error, CustomStringConvertible {
  public let domain: String
  public let code: Int32
  public let message: String
  /// The remote D-Bus error name, when the failure was an error reply.
  public let remoteName: String?

  init(consuming error: UnsafeMutablePointer<GError>?, operation: String) {
    guard let error else {
      self.domain = ""
      self.code = 0
      self.message = "\(operation) failed"
      self.remoteName = nil
      return
    }
    defer { g_error_free(error) }
    self.domain = g_quark_to_string(error.pointee.domain).map { String(cString: $0) } ?? ""
    self.code = error.pointee.code
    if let remote = g_dbus_error_get_remote_error(error) {
      self.remoteName = String(cString: remote)
      g_free(remote)
      _ = g_dbus_error_strip_remote_error(error)
    } else {
      self.remoteName = nil
    }
    self.message = "\(operation): " + (error.pointee.message.map { String(cString: $0) } ?? "")
  }

  public var description: String { message }
}

/// A pending method call; exactly one reply is sent. Wraps GDBusMethodInvocation, or, for calls
/// taken by the worker-thread filter, the call's GDBusMessage and its connection.
final class MethodInvocation {
  private enum Pending {
    case invocation(OpaquePointer)
    /// The call message (one reference held) and the connection to answer on.
    case message(OpaquePointer, connection: OpaquePointer)
  }

  private var pending: Pending?

  /// Takes the reference GDBus hands to the method-call callback.
  init(_ raw: OpaquePointer) { pending = .invocation(raw) }

  /// Answers `message` directly on `connection`, from the thread that calls `reply` or `fail`.
  /// Wraps g_object_ref.
  init(message: OpaquePointer, connection: OpaquePointer) {
    g_object_ref(UnsafeMutableRawPointer(message))
    pending = .message(message, connection: connection)
  }

  deinit {
    // A handler that forgot to reply: answer rather than leave the caller waiting.
    fail(DBusError(name: "org.freedesktop.DBus.Error.Failed", message: "no reply"))
  }

  /// Replies with `value`, which must be a tuple.
  /// Wraps g_dbus_method_invocation_return_value or g_dbus_message_new_method_reply.
  func reply(_ value: DBusValue) {
    guard let pending else { return }
    self.pending = nil
    switch pending {
    case .invocation(let raw):
      g_dbus_method_invocation_return_value(raw, value.makeFloating())
    case .message(let message, let connection):
      defer { g_object_unref(UnsafeMutableRawPointer(message)) }
      guard let reply = Self.replyable(message).flatMap({ g_dbus_message_new_method_reply($0) }) else { return }
      g_dbus_message_set_body(reply, value.makeFloating())
      Self.send(reply, on: connection)
    }
  }

  /// Replies with an error.
  /// Wraps g_dbus_method_invocation_return_dbus_error or g_dbus_message_new_method_error_literal.
  func fail(_ error: DBusError) {
    guard let pending else { return }
    self.pending = nil
    switch pending {
    case .invocation(let raw):
      g_dbus_method_invocation_return_dbus_error(raw, error.name, error.message)
    case .message(let message, let connection):
      defer { g_object_unref(UnsafeMutableRawPointer(message)) }
      guard let reply = Self.replyable(message).flatMap({ g_dbus_message_new_method_error_literal($0, error.name, error.message) })
      else { return }
      Self.send(reply, on: connection)
    }
  }

  /// The call, unless its sender asked for no reply. Wraps g_dbus_message_get_flags.
  private static func replyable(_ message: OpaquePointer) -> OpaquePointer? {
    let flags = g_dbus_message_get_flags(message).rawValue
    return flags & G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED.rawValue != 0 ? nil : message
  }

  /// Queues `reply` for writing and releases it. Wraps g_dbus_connection_send_message.
  private static func send(_ reply: OpaquePointer, on connection: OpaquePointer) {
    _ = g_dbus_connection_send_message(connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, nil, nil)
    g_object_unref(UnsafeMutableRawPointer(reply))
  }
}

/// What serves the objects of a registered subtree.
protocol ObjectTree: AnyObject {
  /// Interfaces the object at `path` implements; nil if nothing is there.
  func interfaces(at path: String) -> [String]?
  /// Child node names below `path`, for introspection.
  func children(of path: String) -> [String]
  func call(
    path: String, interface: String, method: String, parameters: Variant, sender: String,
    invocation: MethodInvocation)
  /// The values of the properties `names`, read together: an object that is not there is an
  /// error, not an empty answer.
  func properties(path: String, interface: String, names: [String]) throws(DBusError) -> [DBusValue]
  /// Sets a property; `reply` receives the outcome before the signals the change causes go out.
  func setProperty(path: String, interface: String, name: String, value: Variant, reply: (Result<Void, DBusError>) -> Void)
}

/// Parsed introspection data. Wraps g_dbus_node_info_new_for_xml.
final class InterfaceDescriptions {
  private let node: UnsafeMutablePointer<GDBusNodeInfo>

  init(xml: String) throws(GIOError) {
    var error: UnsafeMutablePointer<GError>?
    guard let node = g_dbus_node_info_new_for_xml(xml, &error) else {
      throw GIOError(consuming: error, operation: "parsing introspection XML")
    }
    self.node = node
  }

  deinit { g_dbus_node_info_unref(node) }

  /// Methods and properties by interface, for checking calls the worker-thread filter takes.
  var shapes: InterfaceShapes { InterfaceShapes(node) }

  /// Wraps g_dbus_node_info_lookup_interface.
  func lookup(_ name: String) -> UnsafeMutablePointer<GDBusInterfaceInfo>? {
    g_dbus_node_info_lookup_interface(node, name)
  }
}

/// One registered subtree root: the C vtables and the object tree they dispatch to.
final class SubtreeRegistration {
  let root: String
  unowned let tree: any ObjectTree
  let descriptions: InterfaceDescriptions
  let subtreeVTable: UnsafeMutablePointer<GDBusSubtreeVTable>
  let interfaceVTable: UnsafeMutablePointer<GDBusInterfaceVTable>
  var id: UInt32 = 0

  init(root: String, tree: any ObjectTree, descriptions: InterfaceDescriptions) {
    self.root = root
    self.tree = tree
    self.descriptions = descriptions
    subtreeVTable = .allocate(capacity: 1)
    subtreeVTable.initialize(to: GDBusSubtreeVTable())
    subtreeVTable.pointee.enumerate = subtreeEnumerate
    subtreeVTable.pointee.introspect = subtreeIntrospect
    subtreeVTable.pointee.dispatch = subtreeDispatch
    interfaceVTable = .allocate(capacity: 1)
    interfaceVTable.initialize(to: GDBusInterfaceVTable())
    interfaceVTable.pointee.method_call = interfaceMethodCall
    interfaceVTable.pointee.get_property = interfaceGetProperty
    interfaceVTable.pointee.set_property = interfaceSetProperty
  }

  deinit {
    subtreeVTable.deallocate()
    interfaceVTable.deallocate()
  }

  func fullPath(node: UnsafePointer<gchar>?) -> String {
    guard let node else { return root }
    return root + "/" + String(cString: node)
  }

  static func from(_ pointer: gpointer?) -> SubtreeRegistration? {
    guard let pointer else { return nil }
    return Unmanaged<SubtreeRegistration>.fromOpaque(pointer).takeUnretainedValue()
  }
}

private func subtreeEnumerate(
  _ connection: OpaquePointer?, _ sender: UnsafePointer<gchar>?, _ objectPath: UnsafePointer<gchar>?,
  _ userData: gpointer?
) -> UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? {
  guard let registration = SubtreeRegistration.from(userData) else { return nil }
  let names = registration.tree.children(of: registration.root)
  guard let array = g_malloc0(gsize((names.count + 1) * MemoryLayout<UnsafeMutablePointer<gchar>?>.stride)) else {
    return nil
  }
  let strings = array.assumingMemoryBound(to: UnsafeMutablePointer<gchar>?.self)
  for (index, name) in names.enumerated() { strings[index] = g_strdup(name) }
  return strings
}

private func subtreeIntrospect(
  _ connection: OpaquePointer?, _ sender: UnsafePointer<gchar>?, _ objectPath: UnsafePointer<gchar>?,
  _ node: UnsafePointer<gchar>?, _ userData: gpointer?
) -> UnsafeMutablePointer<UnsafeMutablePointer<GDBusInterfaceInfo>?>? {
  guard let registration = SubtreeRegistration.from(userData),
    let names = registration.tree.interfaces(at: registration.fullPath(node: node))
  else { return nil }
  let infos = names.compactMap { registration.descriptions.lookup($0) }
  guard let array = g_malloc0(gsize((infos.count + 1) * MemoryLayout<UnsafeMutablePointer<GDBusInterfaceInfo>?>.stride))
  else { return nil }
  let pointers = array.assumingMemoryBound(to: UnsafeMutablePointer<GDBusInterfaceInfo>?.self)
  for (index, info) in infos.enumerated() { pointers[index] = g_dbus_interface_info_ref(info) }
  return pointers
}

private func subtreeDispatch(
  _ connection: OpaquePointer?, _ sender: UnsafePointer<gchar>?, _ objectPath: UnsafePointer<gchar>?,
  _ interfaceName: UnsafePointer<gchar>?, _ node: UnsafePointer<gchar>?,
  _ outUserData: UnsafeMutablePointer<gpointer?>?, _ userData: gpointer?
) -> UnsafePointer<GDBusInterfaceVTable>? {
  guard let registration = SubtreeRegistration.from(userData), let interfaceName else { return nil }
  let interface = String(cString: interfaceName)
  guard let names = registration.tree.interfaces(at: registration.fullPath(node: node)), names.contains(interface)
  else { return nil }
  outUserData?.pointee = userData
  return UnsafePointer(registration.interfaceVTable)
}

private func string(_ pointer: UnsafePointer<gchar>?) -> String {
  pointer.map { String(cString: $0) } ?? ""
}

private func interfaceMethodCall(
  _ connection: OpaquePointer?, _ sender: UnsafePointer<gchar>?, _ objectPath: UnsafePointer<gchar>?,
  _ interfaceName: UnsafePointer<gchar>?, _ methodName: UnsafePointer<gchar>?, _ parameters: OpaquePointer?,
  _ invocation: OpaquePointer?, _ userData: gpointer?
) {
  guard let invocation else { return }
  let reply = MethodInvocation(invocation)
  guard let registration = SubtreeRegistration.from(userData), let parameters else {
    reply.fail(DBusError(name: "org.freedesktop.DBus.Error.Failed", message: "internal dispatch error"))
    return
  }
  registration.tree.call(
    path: string(objectPath), interface: string(interfaceName), method: string(methodName),
    parameters: Variant(borrowing: parameters), sender: string(sender), invocation: reply)
}

/// GErrors that GDBus sends as our D-Bus error names: one registered code per name in the
/// `secretd-error` domain. (A GError from g_dbus_error_new_for_dbus_error would go out as an
/// "UnmappedGError" name from property handlers.)
enum ErrorDomain {
  private static let codes = Mutex<[String: Int32]>([:])

  /// Wraps g_quark_from_string, g_dbus_error_register_error, g_error_new_literal.
  static func makeGError(_ error: DBusError) -> UnsafeMutablePointer<GError>? {
    let quark = g_quark_from_string("secretd-error")
    let code = codes.withLock { codes -> Int32 in
      if let code = codes[error.name] { return code }
      let code = Int32(codes.count + 1)
      _ = g_dbus_error_register_error(quark, code, error.name)
      codes[error.name] = code
      return code
    }
    return g_error_new_literal(quark, code, error.message)
  }
}

private func setError(_ out: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?, _ error: DBusError) {
  out?.pointee = ErrorDomain.makeGError(error)
}

private func interfaceGetProperty(
  _ connection: OpaquePointer?, _ sender: UnsafePointer<gchar>?, _ objectPath: UnsafePointer<gchar>?,
  _ interfaceName: UnsafePointer<gchar>?, _ propertyName: UnsafePointer<gchar>?,
  _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?, _ userData: gpointer?
) -> OpaquePointer? {
  guard let registration = SubtreeRegistration.from(userData) else { return nil }
  do throws(DBusError) {
    let values = try registration.tree.properties(
      path: string(objectPath), interface: string(interfaceName), names: [string(propertyName)])
    return values.first?.makeFloating()
  } catch let failure {
    setError(error, failure)
    return nil
  }
}

private func interfaceSetProperty(
  _ connection: OpaquePointer?, _ sender: UnsafePointer<gchar>?, _ objectPath: UnsafePointer<gchar>?,
  _ interfaceName: UnsafePointer<gchar>?, _ propertyName: UnsafePointer<gchar>?, _ value: OpaquePointer?,
  _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?, _ userData: gpointer?
) -> gboolean {
  guard let registration = SubtreeRegistration.from(userData), let value else { return 0 }
  var outcome: Result<Void, DBusError> = .success(())
  registration.tree.setProperty(
    path: string(objectPath), interface: string(interfaceName), name: string(propertyName),
    value: Variant(borrowing: value)
  ) { outcome = $0 }
  guard case .failure(let failure) = outcome else { return 1 }
  setError(error, failure)
  return 0
}

/// Whether the name request succeeded, and if not who holds the name.
public enum NameRequestResult: Sendable, Equatable {
  case acquired
  case alreadyOwner
  case taken(ownerPID: UInt32?, ownerCommand: String?)
}

/// A connection to a message bus. Wraps GDBusConnection.
public final class BusConnection {
  let raw: OpaquePointer
  private var registrations: [String: SubtreeRegistration] = [:]
  private var subscriptions: [UInt32] = []
  private var signalHandlers: [SignalHandler] = []
  private var filters: [UInt32] = []

  /// Connects to the bus at `address`, or to the session bus when nil.
  /// Wraps g_dbus_connection_new_for_address_sync and g_bus_get_sync.
  public init(address: String?) throws(GIOError) {
    var error: UnsafeMutablePointer<GError>?
    let connection: OpaquePointer?
    if let address {
      let flags = GDBusConnectionFlags(
        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
      connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error)
    } else {
      connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error)
    }
    guard let connection else { throw GIOError(consuming: error, operation: "connecting to the bus") }
    raw = connection
    // When the bus goes away, GDBus raises SIGTERM, which the main loop handles as a clean exit.
    g_dbus_connection_set_exit_on_close(raw, 1)
  }

  deinit {
    for id in filters { g_dbus_connection_remove_filter(raw, id) }
    for id in subscriptions { g_dbus_connection_signal_unsubscribe(raw, id) }
    for registration in registrations.values { g_dbus_connection_unregister_subtree(raw, registration.id) }
    g_object_unref(UnsafeMutableRawPointer(raw))
  }

  /// This connection's unique name, like `:1.42`. Wraps g_dbus_connection_get_unique_name.
  public var uniqueName: String {
    g_dbus_connection_get_unique_name(raw).map { String(cString: $0) } ?? ""
  }

  /// Serves `tree` for `root` and its direct children. Wraps g_dbus_connection_register_subtree.
  func registerSubtree(_ root: String, tree: any ObjectTree, descriptions: InterfaceDescriptions) throws(GIOError) {
    guard registrations[root] == nil else { return }
    let registration = SubtreeRegistration(root: root, tree: tree, descriptions: descriptions)
    var error: UnsafeMutablePointer<GError>?
    // GDBus keeps the registration (and so its vtables) until it calls the destroy notify: a
    // dispatch already queued when the subtree is unregistered must still find it alive.
    let retained = Unmanaged.passRetained(registration)
    let id = g_dbus_connection_register_subtree(
      raw, root, registration.subtreeVTable, G_DBUS_SUBTREE_FLAGS_DISPATCH_TO_UNENUMERATED_NODES,
      retained.toOpaque(), { data in
        guard let data else { return }
        Unmanaged<SubtreeRegistration>.fromOpaque(data).release()
      }, &error)
    guard id != 0 else {
      retained.release()
      throw GIOError(consuming: error, operation: "registering \(root)")
    }
    registration.id = id
    registrations[root] = registration
  }

  /// Wraps g_dbus_connection_unregister_subtree.
  func unregisterSubtree(_ root: String) {
    guard let registration = registrations.removeValue(forKey: root) else { return }
    g_dbus_connection_unregister_subtree(raw, registration.id)
  }

  func addFilterID(_ id: UInt32) { filters.append(id) }

  var registeredRoots: Set<String> { Set(registrations.keys) }

  /// Emits a signal to everyone listening. Wraps g_dbus_connection_emit_signal.
  func emitSignal(path: String, interface: String, name: String, arguments: DBusValue) {
    _ = g_dbus_connection_emit_signal(raw, nil, path, interface, name, arguments.makeFloating(), nil)
  }

  /// Calls a bus method and waits. Wraps g_dbus_connection_call_sync.
  func callBus(_ method: String, _ arguments: DBusValue, replyType: String) throws(GIOError) -> Variant {
    var error: UnsafeMutablePointer<GError>?
    guard
      let reply = g_dbus_connection_call_sync(
        raw, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
        arguments.makeFloating(), secretd_variant_type(replyType), G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
    else { throw GIOError(consuming: error, operation: method) }
    return Variant(adopting: reply)
  }

  /// Calls any method and waits; for clients of the daemon (tests, tools).
  /// Wraps g_dbus_connection_call_sync.
  func call(
    destination: String, path: String, interface: String, method: String, arguments: DBusValue,
    timeoutMilliseconds: Int32 = 25_000
  ) throws(GIOError) -> Variant {
    var error: UnsafeMutablePointer<GError>?
    guard
      let reply = g_dbus_connection_call_sync(
        raw, destination, path, interface, method, arguments.makeFloating(), nil, G_DBUS_CALL_FLAGS_NONE,
        timeoutMilliseconds, nil, &error)
    else { throw GIOError(consuming: error, operation: method) }
    return Variant(adopting: reply)
  }

  /// Asks for `name`; with `replace`, takes it from a current owner that allows it.
  /// Our own ownership allows replacement, so a later `--replace` can take over from us.
  public func requestName(_ name: String, replace: Bool) throws(GIOError) -> NameRequestResult {
    // DBUS_NAME_FLAG_ALLOW_REPLACEMENT = 1, REPLACE_EXISTING = 2, DO_NOT_QUEUE = 4.
    let flags: UInt32 = 1 | 4 | (replace ? 2 : 0)
    let reply = try callBus("RequestName", .tuple([.string(name), .uint32(flags)]), replyType: "(u)")
    let code = reply.child(0).map { g_variant_get_uint32($0.raw) } ?? 0
    switch code {
    case 1: return .acquired
    case 4: return .alreadyOwner
    default:
      let pid = ownerPID(of: name)
      return .taken(ownerPID: pid, ownerCommand: pid.flatMap(ProcessDetails.command(of:)))
    }
  }

  /// The process id of the connection owning `name`. Wraps GetConnectionUnixProcessID.
  public func ownerPID(of name: String) -> UInt32? {
    guard let reply = try? callBus("GetConnectionUnixProcessID", .tuple([.string(name)]), replyType: "(u)"),
      let value = reply.child(0)
    else { return nil }
    return g_variant_get_uint32(value.raw)
  }

  /// Calls `handler` with the arguments of each matching signal from the bus driver.
  /// Wraps g_dbus_connection_signal_subscribe.
  func subscribeToBus(signal: String, argument0: String?, handler: @escaping (Variant) -> Void) {
    let box = SignalHandler(handler)
    signalHandlers.append(box)
    let id = g_dbus_connection_signal_subscribe(
      raw, "org.freedesktop.DBus", "org.freedesktop.DBus", signal, "/org/freedesktop/DBus", argument0,
      G_DBUS_SIGNAL_FLAGS_NONE,
      { _, _, _, _, _, parameters, userData in
        guard let parameters, let userData else { return }
        Unmanaged<SignalHandler>.fromOpaque(userData).takeUnretainedValue().handler(Variant(borrowing: parameters))
      }, Unmanaged.passUnretained(box).toOpaque(), nil)
    subscriptions.append(id)
  }

  /// Observes our own loss of `name` (another provider ran with `--replace`).
  public func onNameLost(_ name: String, _ handler: @escaping () -> Void) {
    subscribeToBus(signal: "NameLost", argument0: name) { _ in handler() }
  }

  /// Sends everything queued. Wraps g_dbus_connection_flush_sync.
  public func flush() {
    _ = g_dbus_connection_flush_sync(raw, nil, nil)
  }
}

final class SignalHandler {
  let handler: (Variant) -> Void
  init(_ handler: @escaping (Variant) -> Void) { self.handler = handler }
}
