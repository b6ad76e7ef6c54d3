// Calls that do not wait for each other's answers, sent at once: several calls for the wait of
// one round trip. GDBus's own `_sync` call runs a main context of its own for one call; a
// batch runs one for all of its calls, on the calling thread.
import CLibSecret
import GLibBridge

/// One method call to the provider (or the bus daemon), for ``ServiceHandle/callAll(_:)``.
struct BusCall {
  var destination: String
  var path: String
  var interface: String
  var method: String
  var arguments: DBusValue
  var replyType: String
  /// What an error names; the object path unless given.
  var about: String

  init(
    to destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: DBusValue,
    replyType: String, about: String? = nil
  ) {
    (self.destination, self.path, self.interface, self.method) = (destination, path, interface, method)
    (self.arguments, self.replyType, self.about) = (arguments, replyType, about ?? path)
  }
}

extension ServiceHandle {
  /// The most calls a batch keeps in flight: well under the bus daemon's bound on the replies
  /// one connection may await.
  static let callsInFlight = 64

  /// Sends `calls` together and waits for every answer; the results are in the order of
  /// `calls`. A failed call fails alone.
  func callAll(_ calls: [BusCall]) -> [Result<Variant, SecretError>] {
    callAll(calls, meanwhile: {}).answers
  }

  /// ``callAll(_:)``, running `work` while the first answers travel: work that needs no answer
  /// costs no time of its own.
  func callAll<T>(_ calls: [BusCall], meanwhile work: () -> T) -> (answers: [Result<Variant, SecretError>], work: T) {
    guard !calls.isEmpty else { return ([], work()) }
    var (answers, _, done) = callTogether(Array(calls.prefix(Self.callsInFlight)), meanwhile: work)
    while answers.count < calls.count {
      let window = calls[answers.count..<min(answers.count + Self.callsInFlight, calls.count)]
      answers += callTogether(Array(window), meanwhile: {}).answers
    }
    return (answers, done)
  }

  /// Sends `calls` together, as ``callAll(_:meanwhile:)`` does, and returns with each answer the
  /// unique name that sent it (nil when none came): a call to a well-known name learns who
  /// answered it. Wraps `g_dbus_connection_send_message_with_reply` and
  /// `g_dbus_connection_send_message_with_reply_finish` on a private `GMainContext`.
  func callTogether<T>(_ calls: [BusCall], meanwhile work: () -> T)
    -> (answers: [Result<Variant, SecretError>], senders: [String?], work: T)
  {
    let context = g_main_context_new()
    g_main_context_push_thread_default(context)
    defer {
      g_main_context_pop_thread_default(context)
      g_main_context_unref(context)
    }
    let replies = BatchReplies(count: calls.count)
    for (index, call) in calls.enumerated() {
      let slot = Unmanaged.passRetained(ReplySlot(replies, index, expecting: call.replyType)).toOpaque()
      let message = g_dbus_message_new_method_call(call.destination, call.path, call.interface, call.method)
      g_dbus_message_set_body(message, call.arguments.makeFloating())
      g_dbus_connection_send_message_with_reply(
        connection, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, -1, nil, nil,
        { source, result, data in
          guard let data else { return }
          let slot = Unmanaged<ReplySlot>.fromOpaque(data).takeRetainedValue()
          var error: UnsafeMutablePointer<GError>?
          let reply = g_dbus_connection_send_message_with_reply_finish(OpaquePointer(source), result, &error)
          slot.replies.answers[slot.index] = reply.map { slot.answer(from: $0) } ?? .error(error)
          slot.replies.waiting -= 1
        }, slot)
      g_object_unref(UnsafeMutableRawPointer(message))
    }
    let done = work()
    while replies.waiting > 0 { g_main_context_iteration(context, 1) }
    var senders: [String?] = []
    let answers = zip(calls, replies.answers).map { call, answer -> Result<Variant, SecretError> in
      switch answer {
      case .reply(let reply, let sender):
        senders.append(sender)
        return .success(reply)
      case .error(let error, let sender):
        senders.append(sender)
        return .failure(SecretError(GLibError(consuming: error), busName: busName, object: call.about))
      case .unexpected(let type):
        senders.append(nil)
        return .failure(Self.badReply("\(call.method) answered \(type), not \(call.replyType)"))
      }
    }
    return (answers, senders, done)
  }
}

/// The answers of one batch, filled in by GDBus's callbacks on the batch's own thread.
private final class BatchReplies {
  enum Answer {
    case reply(Variant, sender: String?)
    /// The error GDBus gave, owned until it becomes a `SecretError`.
    case error(UnsafeMutablePointer<GError>?, sender: String? = nil)
    /// A reply whose body is not of the type the call expects.
    case unexpected(String)
  }

  /// Every answer, once `waiting` is 0; an unanswered slot stays an error without a text.
  var answers: [Answer]
  var waiting: Int

  init(count: Int) {
    answers = Array(repeating: .error(nil), count: count)
    waiting = count
  }
}

/// Which call of a batch a callback answers.
private final class ReplySlot {
  let replies: BatchReplies
  let index: Int
  let replyType: String

  init(_ replies: BatchReplies, _ index: Int, expecting replyType: String) {
    self.replies = replies
    self.index = index
    self.replyType = replyType
  }

  /// The answer a reply message holds, which it is given (transfer full): its body, checked to
  /// be of the expected type, or the error it carries. Wraps `g_dbus_message_to_gerror`.
  func answer(from message: OpaquePointer) -> BatchReplies.Answer {
    defer { g_object_unref(UnsafeMutableRawPointer(message)) }
    let sender = g_dbus_message_get_sender(message).map { String(cString: $0) }
    var error: UnsafeMutablePointer<GError>?
    if g_dbus_message_to_gerror(message, &error) != 0 { return .error(error, sender: sender) }
    // An empty body is the empty tuple.
    let body =
      g_dbus_message_get_body(message).map { Variant(borrowing: $0) }
      ?? Variant(adopting: g_variant_new_tuple(nil, 0))
    guard body.isOfType(replyType) else { return .unexpected(body.typeString) }
    return .reply(body, sender: sender)
  }
}
