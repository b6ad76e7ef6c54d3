// Every GIO call of SecretsOpenBao: a TCP connection, TLS over it for https, made by a
// GSocketClient and read and written with blocking calls that the socket's timeout bounds.
import CGio
import GLibBridge
import Glibc

/// Why a connection failed: GLib's text, and whether the peer closed or reset it (as a server
/// closes a kept-alive connection it no longer wants), as opposed to a timeout or a TLS failure.
struct SocketFailure: Error {
  let reason: String
  let peerClosed: Bool

  /// Takes ownership of `error` and frees it.
  init(consuming error: UnsafeMutablePointer<GError>?, operation: String) {
    let closed = error.map { Self.isClosure($0.pointee) } ?? false
    reason = GLibError(consuming: error, operation: operation).message
    peerClosed = closed
  }

  init(reason: String, peerClosed: Bool) {
    self.reason = reason
    self.peerClosed = peerClosed
  }

  private static func isClosure(_ error: GError) -> Bool {
    let io = g_io_error_quark()
    if error.domain == io {
      return [G_IO_ERROR_CONNECTION_CLOSED, G_IO_ERROR_NOT_CONNECTED].contains { Int32($0.rawValue) == error.code }
    }
    return error.domain == g_tls_error_quark() && error.code == Int32(G_TLS_ERROR_EOF.rawValue)
  }
}

/// One connection to a server, TLS when asked for. Closed when released.
///
/// `@unchecked Sendable`: GIO's streams may be used from any thread but not from two at once.
/// A connection is only ever held by one request at a time: by the `send` that made or took
/// it, or by the transport's idle list under its `Mutex`, from which a `send` takes it out
/// before any use. Its pointers are never reassigned.
final class SocketConnection: @unchecked Sendable {
  private let connection: UnsafeMutablePointer<GSocketConnection>
  private let input: UnsafeMutablePointer<GInputStream>
  private let output: UnsafeMutablePointer<GOutputStream>
  private let socket: UnsafeMutablePointer<GSocket>

  /// Connects to `origin` (`http://HOST:PORT` or `https://HOST:PORT`; https with TLS, the
  /// certificate checked against the system's CA store by GIO's TLS backend, glib-networking).
  /// `timeoutSeconds` bounds the connection and, afterwards, every read and write on it.
  /// Wraps g_socket_client_connect_to_uri, g_socket_client_set_timeout, g_socket_client_set_tls.
  init(to origin: String, tls: Bool, timeoutSeconds: UInt32) throws(SocketFailure) {
    // A client per connection: GSocketClient is not documented as safe to share between threads,
    // and making one costs far less than the connection.
    guard let client = g_socket_client_new() else {
      throw SocketFailure(reason: "GIO could not make a socket client", peerClosed: false)
    }
    defer { g_object_unref(client) }
    g_socket_client_set_timeout(client, timeoutSeconds)
    g_socket_client_set_tls(client, tls ? 1 : 0)
    var error: UnsafeMutablePointer<GError>?
    guard let made = g_socket_client_connect_to_uri(client, origin, tls ? 443 : 80, nil, &error) else {
      throw SocketFailure(consuming: error, operation: "cannot connect to \(origin)")
    }
    let stream = UnsafeMutableRawPointer(made).assumingMemoryBound(to: GIOStream.self)
    guard let input = g_io_stream_get_input_stream(stream), let output = g_io_stream_get_output_stream(stream),
      let socket = g_socket_connection_get_socket(made)
    else {
      g_object_unref(made)
      throw SocketFailure(reason: "GIO made a connection to \(origin) without streams", peerClosed: false)
    }
    (connection, self.input, self.output, self.socket) = (made, input, output, socket)
    // Requests are written whole; the kernel need not wait to merge them with more.
    _ = g_socket_set_option(socket, Int32(IPPROTO_TCP), TCP_NODELAY, 1, nil)
  }

  deinit { g_object_unref(connection) }

  /// Writes every byte of `bytes`, adding to `written` what was sent before any failure.
  /// Wraps g_output_stream_write_all.
  func write(_ bytes: UnsafeRawBufferPointer, written: inout Int) throws(SocketFailure) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    var count: gsize = 0
    var error: UnsafeMutablePointer<GError>?
    let succeeded = g_output_stream_write_all(output, base, gsize(bytes.count), &count, nil, &error) != 0
    written += Int(count)
    guard succeeded else { throw SocketFailure(consuming: error, operation: "cannot send the request") }
  }

  /// Reads what has arrived, waiting for at least one byte; 0 when the peer closed the
  /// connection. Wraps g_input_stream_read.
  func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketFailure) -> Int {
    guard let base = buffer.baseAddress else { return 0 }
    var error: UnsafeMutablePointer<GError>?
    let count = g_input_stream_read(input, base, gsize(buffer.count), nil, &error)
    guard count >= 0 else { throw SocketFailure(consuming: error, operation: "cannot read the answer") }
    return Int(count)
  }

  /// Whether the idle connection has something to read, closed or failed: the server closed it,
  /// or sent what no request asked for. Either way it is not used again. Wraps
  /// g_socket_condition_check.
  var hasStirredWhileIdle: Bool {
    let asked = GIOCondition(rawValue: G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue)
    return g_socket_condition_check(socket, asked).rawValue != 0
  }
}
