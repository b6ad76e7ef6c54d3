import Foundation
import Glibc
import SecretTestSupport
import Synchronization

/// A tiny HTTP server on a loopback port, in this process, for answers no real server gives
/// (chunks, oversized fields, a close that crosses a request, silence): each request gets what
/// `answer` says. It counts the connections it accepted and the requests it read.
final class ScriptedHTTPServer: Sendable {
  /// What the server does with one request.
  enum Reply: Sendable {
    /// Sends these bytes and reads the next request on the same connection.
    case send(String)
    /// Sends these bytes, then closes the connection.
    case sendThenClose(String)
    /// Closes the connection without a word, as a server closing an idle one as the request crosses it.
    case close
    /// Never answers: waits for the client to go.
    case silence
  }

  /// One request as the server read it.
  struct Request: Sendable {
    let method: String
    let target: String
    /// Field names in lower case.
    let fields: [String: String]
    let body: String
    /// Which request this is, from 0, over every connection.
    let number: Int
  }

  /// `http://127.0.0.1:PORT`.
  let address: String
  private let listener: Int32
  private let state = ServerState()

  /// What the server's threads share with the test.
  private final class ServerState: Sendable {
    let mutex = Mutex<(accepted: Int, open: Set<Int32>, closed: Int, requests: [Request])>((0, [], 0, []))
  }

  init(_ answer: @escaping @Sendable (Request) -> Reply) throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw HarnessError("cannot create a socket") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let listening = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
        bind(listener, raw, length) == 0 && getsockname(listener, raw, &length) == 0 && listen(listener, 16) == 0
      }
    }
    guard listening else {
      close(listener)
      throw HarnessError("cannot listen on a loopback port")
    }
    self.address = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
    self.listener = listener
    let state = state
    Thread.detachNewThread {
      // The listener is closed here, once accept has stopped: `stop` only shuts it down, so
      // that its number is never reused while this thread may still use it.
      defer { close(listener) }
      while true {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        state.mutex.withLock {
          $0.accepted += 1
          $0.open.insert(connection)
        }
        Thread.detachNewThread { Self.serve(connection, state: state, answer) }
      }
    }
  }

  /// Connections accepted so far.
  var connectionCount: Int { state.mutex.withLock { $0.accepted } }
  /// Connections the server has closed itself (`sendThenClose`, `close`, `silence` once the client went).
  var closedCount: Int { state.mutex.withLock { $0.closed } }
  /// Every request read so far, in order.
  var requests: [Request] { state.mutex.withLock { $0.requests } }

  /// Stops accepting and ends every connection still open.
  func stop() {
    shutdown(listener, Int32(SHUT_RDWR))
    state.mutex.withLock { state in
      for connection in state.open { shutdown(connection, Int32(SHUT_RDWR)) }
    }
  }

  private static func serve(_ connection: Int32, state: ServerState, _ answer: (Request) -> Reply) {
    // Closed under the lock, so that `stop` never shuts down a number already reused.
    defer {
      state.mutex.withLock {
        $0.open.remove(connection)
        close(connection)
      }
    }
    var pending: [UInt8] = []
    while let request = readRequest(connection, &pending, state: state) {
      switch answer(request) {
      case .send(let text):
        guard writeAll(connection, Array(text.utf8)) else { return }
        continue
      case .sendThenClose(let text):
        _ = writeAll(connection, Array(text.utf8))
      case .close:
        break
      case .silence:
        var byte: UInt8 = 0
        while recv(connection, &byte, 1, 0) > 0 {}
      }
      shutdown(connection, Int32(SHUT_RDWR))
      state.mutex.withLock { $0.closed += 1 }
      return
    }
  }

  /// The next request on `connection` (its head and a body of `Content-Length`); nil when the
  /// client closed it.
  private static func readRequest(
    _ connection: Int32, _ pending: inout [UInt8], state: ServerState
  ) -> Request? {
    func receive() -> Bool {
      var chunk = [UInt8](repeating: 0, count: 65536)
      let count = recv(connection, &chunk, chunk.count, 0)
      guard count > 0 else { return false }
      pending += chunk[..<count]
      return true
    }
    let separator = Array("\r\n\r\n".utf8)
    var headEnd: Int? { pending.indices.first { Array(pending[$0...].prefix(4)) == separator } }
    while headEnd == nil { guard receive() else { return nil } }
    guard let end = headEnd else { return nil }
    let lines = String(decoding: pending[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let requestLine = lines[0].split(separator: " ").map(String.init)
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let length = Int(fields["content-length"] ?? "0") ?? 0
    while pending.count < end + 4 + length { guard receive() else { return nil } }
    let body = String(decoding: pending[(end + 4)..<(end + 4 + length)], as: UTF8.self)
    pending.removeFirst(end + 4 + length)
    return state.mutex.withLock { state in
      let request = Request(
        method: requestLine.first ?? "", target: requestLine.dropFirst().first ?? "", fields: fields, body: body,
        number: state.requests.count)
      state.requests.append(request)
      return request
    }
  }

  private static func writeAll(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
    var sent = 0
    while sent < bytes.count {
      let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard count > 0 else { return false }
      sent += count
    }
    return true
  }
}

extension ScriptedHTTPServer.Reply {
  /// A 200 answer with a JSON body and its length.
  static func json(_ body: String) -> Self {
    .send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
  }
}
