// secretd authenticates to the bus itself: the SASL EXTERNAL exchange GDBus would run, without
// NEGOTIATE_UNIX_FD. secretd's methods take no file descriptors; a connection that never
// negotiated them is one the bus delivers none to (it answers a call that carries some with
// NotSupported), so no client can fill secretd's descriptor table by sending them.
import CGio
import GLibBridge
import SystemCalls

enum BusAuthentication {
  /// The longest line the bus answers AUTH with that is read (`OK <32 hex digits>` is 35 bytes).
  private static let longestReply = 512

  /// Authenticates on `stream`, a new connection to the bus, as this process's effective user.
  /// Wraps g_io_stream_get_input_stream, g_io_stream_get_output_stream,
  /// g_output_stream_write_all and g_input_stream_read.
  static func authenticate(_ stream: UnsafeMutablePointer<GIOStream>) throws(GLibError) {
    let user = String(UserID.effective.rawValue).utf8.map { byte in
      String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
    }.joined()
    try send([0] + Array("AUTH EXTERNAL \(user)\r\n".utf8), on: stream)
    let reply = try readLine(from: stream)
    guard reply.hasPrefix("OK ") else { throw failure("the bus refused EXTERNAL authentication: \(reply)") }
    try send(Array("BEGIN\r\n".utf8), on: stream)
  }

  private static func send(_ bytes: [UInt8], on stream: UnsafeMutablePointer<GIOStream>) throws(GLibError) {
    var error: UnsafeMutablePointer<GError>?
    let written = bytes.withUnsafeBytes { raw in
      g_output_stream_write_all(
        g_io_stream_get_output_stream(stream), raw.baseAddress, gsize(raw.count), nil, nil, &error)
    }
    guard written != 0 else { throw GLibError(consuming: error, operation: "authenticating to the bus") }
  }

  /// One line up to CR LF, read a byte at a time: nothing after it may be taken from GDBus.
  private static func readLine(from stream: UnsafeMutablePointer<GIOStream>) throws(GLibError) -> String {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while line.count < longestReply, !line.reversed().starts(with: [UInt8(ascii: "\n"), UInt8(ascii: "\r")]) {
      var error: UnsafeMutablePointer<GError>?
      let count = g_input_stream_read(g_io_stream_get_input_stream(stream), &byte, 1, nil, &error)
      if count < 0 { throw GLibError(consuming: error, operation: "authenticating to the bus") }
      if count == 0 { throw failure("the bus closed the connection while authenticating") }
      line.append(byte)
    }
    return String(decoding: line.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
  }

  private static func failure(_ reason: String) -> GLibError {
    GLibError(consuming: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_FAILED.rawValue), reason))
  }
}
