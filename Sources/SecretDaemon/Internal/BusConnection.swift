// A connection to a message bus: name ownership, calls to the bus driver, signals, sending.
import CGio
import CSystemCalls
package import GLibBridge
package import SystemCalls

/// Whether the name request succeeded, and if not who holds the name.
package enum NameRequestResult: Sendable, Equatable {
  case acquired
  case alreadyOwner
  case taken(owner: ProcessID?, command: String?)
}

/// What the bus driver knows of a client connection.
struct ConnectionCredentials: Equatable {
  var user: UserID?
  var process: ProcessID?
}

/// A connection to a message bus. Wraps GDBusConnection.
package final class BusConnection: @unchecked Sendable {
  // SAFETY: GDBusConnection may be used from any thread (GIO documents it thread-safe). The
  // Swift arrays below change only while the daemon is set up and torn down, on the thread
  // that owns the BusConnection, never while calls are being served.
  let raw: OpaquePointer
  private var subscriptions: [UInt32] = []
  private var callbacks: [AnyObject] = []
  private var filters: [UInt32] = []
  private var closedHandler: gulong = 0

  /// Connects to the bus at `address`, or to the session bus when nil, with no file descriptor
  /// passing (see BusAuthentication). Wraps g_dbus_address_get_stream_sync and
  /// g_dbus_connection_new_sync.
  package init(address: String?) throws(GLibError) {
    var error: UnsafeMutablePointer<GError>?
    let address = if let address { address } else { try Self.sessionBusAddress() }
    guard let stream = g_dbus_address_get_stream_sync(address, nil, nil, &error) else {
      throw GLibError(consuming: error, operation: "connecting to the bus")
    }
    defer { g_object_unref(UnsafeMutableRawPointer(stream)) }
    try BusAuthentication.authenticate(stream)
    let flags = G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION
    guard let connection = g_dbus_connection_new_sync(stream, nil, flags, nil, nil, &error) else {
      throw GLibError(consuming: error, operation: "connecting to the bus")
    }
    raw = connection
    // Losing the bus is an error the daemon reports itself (see `onClosed`), not a SIGTERM.
    g_dbus_connection_set_exit_on_close(raw, 0)
  }

  /// The session bus's address, as libdbus and GDBus find it. Wraps g_dbus_address_get_for_bus_sync.
  private static func sessionBusAddress() throws(GLibError) -> String {
    var error: UnsafeMutablePointer<GError>?
    guard let address = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else {
      throw GLibError(consuming: error, operation: "finding the session bus")
    }
    defer { g_free(address) }
    return String(cString: address)
  }

  deinit {
    if closedHandler != 0 { g_signal_handler_disconnect(UnsafeMutableRawPointer(raw), closedHandler) }
    for id in filters { g_dbus_connection_remove_filter(raw, id) }
    for id in subscriptions { g_dbus_connection_signal_unsubscribe(raw, id) }
    g_object_unref(UnsafeMutableRawPointer(raw))
  }

  /// Whether the bus has sent more than GDBus has read yet: other calls are waiting. Wraps
  /// g_dbus_connection_get_stream, g_socket_connection_get_socket, g_socket_get_fd, FIONREAD.
  var hasUnreadMessages: Bool {
    guard let stream = g_dbus_connection_get_stream(raw),
      g_type_check_instance_is_a(
        UnsafeMutableRawPointer(stream).assumingMemoryBound(to: GTypeInstance.self), g_socket_connection_get_type())
        != 0,
      let socket = g_socket_connection_get_socket(
        UnsafeMutableRawPointer(stream).assumingMemoryBound(to: GSocketConnection.self))
    else { return true }
    return secretd_unread_bytes(g_socket_get_fd(socket)) != 0
  }

  /// This connection's unique name, like `:1.42`. Wraps g_dbus_connection_get_unique_name.
  package var uniqueName: String {
    g_dbus_connection_get_unique_name(raw).map { String(cString: $0) } ?? ""
  }

  /// This machine's D-Bus id, for Peer.GetMachineId: the first line of /etc/machine-id, or of
  /// D-Bus's own copy.
  static let machineID: String = {
    for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
      guard let file = try? FileDescriptor.open(path, .readOnly) else { continue }
      defer { file.close() }
      guard let bytes = try? file.readAll() else { continue }
      return String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
    return ""
  }()

  // MARK: Names

  /// Asks for `name`. `replace` takes it from a current owner that allows it;
  /// `allowReplacement` lets a later `--replace` take it from us (off by default, so no client
  /// can make us give up the name and the store with it).
  package func requestName(_ name: String, replace: Bool, allowReplacement: Bool) throws(GLibError) -> NameRequestResult
  {
    // DBUS_NAME_FLAG_ALLOW_REPLACEMENT = 1, REPLACE_EXISTING = 2, DO_NOT_QUEUE = 4.
    let flags: UInt32 = 4 | (replace ? 2 : 0) | (allowReplacement ? 1 : 0)
    let reply = try callBus("RequestName", .tuple([.string(name), .uint32(flags)]), replyType: "(u)")
    switch reply.child(0)?.uint32 ?? 0 {
    case 1: return .acquired
    case 4: return .alreadyOwner
    default:
      let owner = ownerPID(of: name)
      return .taken(owner: owner, command: owner?.command)
    }
  }

  /// Whether `name` has an owner now. Wraps NameHasOwner.
  package func hasOwner(_ name: String) -> Bool {
    (try? callBus("NameHasOwner", .tuple([.string(name)]), replyType: "(b)"))?.child(0)?.boolean == true
  }

  /// Whether the bus would start a program for `name` (it has a service file).
  /// Wraps ListActivatableNames.
  package func canActivate(_ name: String) -> Bool {
    (try? callBus("ListActivatableNames", .tuple([]), replyType: "(as)"))?.child(0)?.strings?.contains(name) == true
  }

  /// The process id of the connection owning `name`. Wraps GetConnectionUnixProcessID.
  func ownerPID(of name: String) -> ProcessID? {
    guard let reply = try? callBus("GetConnectionUnixProcessID", .tuple([.string(name)]), replyType: "(u)"),
      let pid = reply.child(0)?.uint32
    else { return nil }
    return ProcessID(rawValue: Int32(bitPattern: pid))
  }

  /// The user and process of the client connection `name`, as the bus driver vouches for them.
  /// Blocks for one round trip; never call it on GDBus's worker thread.
  /// Wraps GetConnectionCredentials.
  func credentials(of name: String) throws(GLibError) -> ConnectionCredentials {
    let reply = try callBus("GetConnectionCredentials", .tuple([.string(name)]), replyType: "(a{sv})")
    let values = reply.child(0)?.variantDictionary ?? [:]
    return ConnectionCredentials(
      user: values["UnixUserID"]?.uint32.map { UserID(rawValue: $0) },
      process: values["ProcessID"]?.uint32.map { ProcessID(rawValue: Int32(bitPattern: $0)) })
  }

  // MARK: Calls

  /// Calls a method of the bus driver and waits. Wraps g_dbus_connection_call_sync.
  func callBus(_ method: String, _ arguments: DBusValue, replyType: String) throws(GLibError) -> Variant {
    var error: UnsafeMutablePointer<GError>?
    // The type's characters must outlive the call, not just the cast.
    let reply = replyType.withCString { type in
      g_dbus_connection_call_sync(
        raw, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
        arguments.makeFloating(), cgio_variant_type(type), G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
    }
    guard let reply else { throw GLibError(consuming: error, operation: method) }
    return Variant(adopting: reply)
  }

  /// Calls any method and waits; for clients of the daemon (tests, tools).
  /// Wraps g_dbus_connection_call_sync.
  func call(
    destination: String, path: String, interface: String, method: String, arguments: DBusValue,
    timeoutMilliseconds: Int32 = 25_000
  ) throws(GLibError) -> Variant {
    var error: UnsafeMutablePointer<GError>?
    guard
      let reply = g_dbus_connection_call_sync(
        raw, destination, path, interface, method, arguments.makeFloating(), nil, G_DBUS_CALL_FLAGS_NONE,
        timeoutMilliseconds, nil, &error)
    else { throw GLibError(consuming: error, operation: method) }
    return Variant(adopting: reply)
  }

  /// Sends a method call that expects no reply. Wraps g_dbus_message_new_method_call and
  /// g_dbus_connection_send_message.
  func sendWithoutReply(destination: String, path: String, interface: String, method: String, arguments: DBusValue) {
    guard let message = g_dbus_message_new_method_call(destination, path, interface, method) else { return }
    g_dbus_message_set_body(message, arguments.makeFloating())
    g_dbus_message_set_flags(message, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
    _ = g_dbus_connection_send_message(raw, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, nil, nil)
    g_object_unref(UnsafeMutableRawPointer(message))
  }

  // MARK: Signals

  /// Emits a signal to each of `destinations` by name, unless its body exceeds `maximumBytes`,
  /// which no signal built within the daemon's limits does. Wraps g_dbus_connection_emit_signal.
  func emitSignal(
    _ signal: BusSignal, path: String, arguments: DBusValue, to destinations: [String], maximumBytes: Int
  ) {
    let (interface, name) = (signal.interface, signal.name)
    let body = g_variant_ref_sink(arguments.makeFloating())
    defer { g_variant_unref(body) }
    assert(String(cString: g_variant_get_type_string(body)) == signal.signature, "\(name) sent unlike its declaration")
    let size = Int(g_variant_get_size(body))
    guard size <= maximumBytes else {
      Log.error("signal \(interface).\(name) on \(path) would be \(size) bytes, over \(maximumBytes); not sent")
      return
    }
    for destination in destinations {
      _ = g_dbus_connection_emit_signal(raw, destination, path, interface, name, body, nil)
    }
  }

  /// Calls `handler` on the main context with the arguments of each matching signal from the
  /// bus driver. Wraps g_dbus_connection_signal_subscribe.
  func subscribeToBus(signal: String, argument0: String?, handler: @escaping (Variant) -> Void) {
    let box = SignalHandler(handler)
    callbacks.append(box)
    let id = g_dbus_connection_signal_subscribe(
      raw, "org.freedesktop.DBus", "org.freedesktop.DBus", signal, "/org/freedesktop/DBus", argument0,
      G_DBUS_SIGNAL_FLAGS_NONE,
      { _, _, _, _, _, parameters, userData in
        guard let parameters, let userData else { return }
        Unmanaged<SignalHandler>.fromOpaque(userData).takeUnretainedValue().handler(Variant(borrowing: parameters))
      }, Unmanaged.passUnretained(box).toOpaque(), nil)
    subscriptions.append(id)
  }

  /// Calls `handler` when another connection takes `name` from us.
  package func onNameLost(_ name: String, _ handler: @escaping () -> Void) {
    subscribeToBus(signal: "NameLost", argument0: name) { _ in handler() }
  }

  /// Calls `handler` on the main context when the bus connection closes: with whether the bus
  /// itself went away (it ended, as when its session ends), and GDBus's reason.
  /// Wraps the GDBusConnection "closed" signal.
  package func onClosed(_ handler: @escaping (_ busWentAway: Bool, _ reason: String) -> Void) {
    let box = ClosedHandler(handler)
    callbacks.append(box)
    let callback: @convention(c) (OpaquePointer?, gboolean, UnsafeMutablePointer<GError>?, gpointer?) -> Void = {
      _, vanished, error, userData in
      guard let userData else { return }
      let reason = error?.pointee.message.map { String(cString: $0) } ?? "closed"
      Unmanaged<ClosedHandler>.fromOpaque(userData).takeUnretainedValue().handler(vanished != 0, reason)
    }
    closedHandler = g_signal_connect_data(
      UnsafeMutableRawPointer(raw), "closed", unsafeBitCast(callback, to: GCallback.self),
      Unmanaged.passUnretained(box).toOpaque(), nil, GConnectFlags(0))
  }

  /// Runs `filter` on GDBus's worker thread for every message, before GDBus dispatches it.
  /// Wraps g_dbus_connection_add_filter.
  func addFilter(_ filter: MessageFilter) {
    let id = g_dbus_connection_add_filter(
      raw, filterMessage, Unmanaged.passRetained(filter).toOpaque(),
      { userData in
        guard let userData else { return }
        Unmanaged<MessageFilter>.fromOpaque(userData).release()
      })
    filters.append(id)
  }

  /// Sends everything queued. Wraps g_dbus_connection_flush_sync.
  package func flush() {
    _ = g_dbus_connection_flush_sync(raw, nil, nil)
  }
}

final class SignalHandler {
  let handler: (Variant) -> Void
  init(_ handler: @escaping (Variant) -> Void) { self.handler = handler }
}

final class ClosedHandler {
  let handler: (Bool, String) -> Void
  init(_ handler: @escaping (Bool, String) -> Void) { self.handler = handler }
}

/// What happens to each incoming message on GDBus's worker thread: `take` returns true when it
/// took the message, false to leave it to GDBus. It must not block: the same thread reads the bus.
final class MessageFilter {
  let take: (_ message: OpaquePointer, _ connection: OpaquePointer) -> Bool
  init(_ take: @escaping (_ message: OpaquePointer, _ connection: OpaquePointer) -> Bool) { self.take = take }
}

/// The C filter: hands incoming messages to the Swift filter; a taken message is released here.
private func filterMessage(
  _ connection: OpaquePointer?, _ message: OpaquePointer?, _ incoming: gboolean, _ userData: gpointer?
) -> OpaquePointer? {
  guard incoming != 0, let connection, let message, let userData else { return message }
  let filter = Unmanaged<MessageFilter>.fromOpaque(userData).takeUnretainedValue()
  guard filter.take(message, connection) else { return message }
  // The filter owns `message` (transfer full); taking it means releasing our reference.
  g_object_unref(UnsafeMutableRawPointer(message))
  return nil
}
