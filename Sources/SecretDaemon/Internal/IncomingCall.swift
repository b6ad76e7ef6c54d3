// A method call read from the bus, answered exactly once from whichever thread handles it.
import CGio
import GLibBridge
import Synchronization

/// A method call taken off the bus. Wraps a GDBusMessage and the connection it came on.
final class IncomingCall: @unchecked Sendable {
  // SAFETY: a received GDBusMessage is locked (immutable) and reference-counted atomically, and
  // GDBusConnection sends from any thread; the only mutable state, whether the call was
  // answered, is an atomic, so the reply goes out once whatever thread races to send it.
  private let message: OpaquePointer
  private let connection: OpaquePointer
  let path: String
  /// Empty when the caller named none (D-Bus then looks the member up on every interface).
  let interface: String
  let member: String
  let sender: String
  let body: Variant
  /// The serialised size of the body, in bytes.
  let bodySize: Int
  private let answered = Atomic<Bool>(false)
  /// The size of the reply's body once replied.
  private let replyBytes = Atomic<Int>(0)
  /// From this size on, a reply is written out before its client's next call runs
  /// (``waitUntilLargeReplyIsWritten()``).
  static let largeReplyBytes = 64 << 10

  /// Takes a reference to `message` if it is a method call with a path, member and sender.
  /// Wraps g_dbus_message_get_*.
  init?(message: OpaquePointer, connection: OpaquePointer) {
    guard g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_METHOD_CALL,
      let path = g_dbus_message_get_path(message), let member = g_dbus_message_get_member(message),
      let sender = g_dbus_message_get_sender(message)
    else { return nil }
    self.message = message
    self.connection = connection
    g_object_ref(UnsafeMutableRawPointer(message))
    g_object_ref(UnsafeMutableRawPointer(connection))
    self.path = String(cString: path)
    self.member = String(cString: member)
    self.sender = String(cString: sender)
    self.interface = g_dbus_message_get_interface(message).map { String(cString: $0) } ?? ""
    if let raw = g_dbus_message_get_body(message) {
      body = Variant(borrowing: raw)
    } else {
      body = Variant(adopting: DBusValue.tuple([]).makeFloating())
    }
    bodySize = Int(g_variant_get_size(body.raw))
  }

  deinit {
    // A call dropped unanswered (its client left) gets an answer anyway; the bus discards it.
    fail(.failed("the call was dropped"))
    g_object_unref(UnsafeMutableRawPointer(message))
    g_object_unref(UnsafeMutableRawPointer(connection))
  }

  /// The body's type, such as `(sv)`.
  var signature: String { body.typeString }

  /// Replies with `value`, a tuple, unless its body would exceed `maximumBytes`: then the caller
  /// gets LimitsExceeded instead. Wraps g_dbus_message_new_method_reply and
  /// g_dbus_connection_send_message.
  func reply(_ value: DBusValue, maximumBytes: Int) {
    let body = g_variant_ref_sink(value.makeFloating())
    defer { g_variant_unref(body) }
    let size = Int(g_variant_get_size(body))
    guard size <= maximumBytes else {
      fail(
        .limitsExceeded(
          "the answer to \(member) would be \(size) bytes, over secretd's limit of \(maximumBytes) "
            + "(--max-reply-size); ask for fewer items per call"))
      return
    }
    guard claimAnswer(), let reply = g_dbus_message_new_method_reply(message) else { return }
    g_dbus_message_set_body(reply, body)
    replyBytes.store(size, ordering: .relaxed)
    send(reply)
  }

  /// Waits until a large reply has been written to the bus. GDBus writes answers in the order
  /// they were queued: without this wait, a client that floods with calls of large answers
  /// would keep a queue of them ahead of every other client's answer. Never called on the
  /// thread that reads the bus, which is the one that writes. Wraps g_dbus_connection_flush_sync.
  func waitUntilLargeReplyIsWritten() {
    guard replyBytes.load(ordering: .relaxed) >= Self.largeReplyBytes else { return }
    _ = g_dbus_connection_flush_sync(connection, nil, nil)
  }

  /// Replies with an error. Wraps g_dbus_message_new_method_error_literal.
  func fail(_ error: DBusError) {
    guard claimAnswer(), let reply = g_dbus_message_new_method_error_literal(message, error.name, error.message)
    else { return }
    send(reply)
  }

  /// Answers with `outcome`.
  func answer(_ outcome: Result<DBusValue, DBusError>, maximumBytes: Int) {
    switch outcome {
    case .success(let value): reply(value, maximumBytes: maximumBytes)
    case .failure(let error): fail(error)
    }
  }

  /// True for the first answer; false afterwards, or when the caller expects none.
  /// Wraps g_dbus_message_get_flags.
  private func claimAnswer() -> Bool {
    guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return false }
    return g_dbus_message_get_flags(message).rawValue & G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED.rawValue == 0
  }

  /// Queues `reply` for writing and releases it. Wraps g_dbus_connection_send_message.
  private func send(_ reply: OpaquePointer) {
    _ = g_dbus_connection_send_message(connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, nil, nil)
    g_object_unref(UnsafeMutableRawPointer(reply))
  }
}
