import Foundation
import Synchronization
import SystemCalls

/// One HTTP answer.
struct HTTPResponse: Sendable {
  let status: Int
  let body: Data
  /// Where a redirect points.
  var location: String? = nil
  /// The storage index the answer reflects (`X-Vault-Index`), for read-after-write consistency.
  var index: String? = nil
  /// An earlier attempt at the same request may have been carried out without its answer
  /// arriving (a write sent to a node that died): the answer may be to a repeat.
  var followsUnconfirmedAttempt = false

  /// The body as a JSON object, when it is one.
  var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }

  /// OpenBao's `errors` list, joined, for messages (it never holds a secret).
  var errorText: String {
    let errors = (json?["errors"] as? [Any])?.compactMap { $0 as? String } ?? []
    return errors.isEmpty ? "HTTP \(status)" : errors.joined(separator: "; ")
  }
}

/// Blocking HTTP/1.1 requests, for callers that are already off Swift's cooperative pool (the
/// persistence core calls stores from its own queues). Redirects are answers, never followed:
/// a standby points at the node it believes active, which may be the one that just died, and
/// only the caller knows the others.
///
/// Connections are kept alive and reused, for reads and writes alike: each server has a list
/// of idle ones, and a request takes one out (or makes one) and gives it back once its answer
/// is read whole, so there are as many as requests run at once.
///
/// When a request may be sent twice: a server closes a kept-alive connection it no longer
/// wants whenever it likes, and a request written meanwhile fails without an answer. An idle
/// connection that the server has already closed is not used (`hasStirredWhileIdle`), but the
/// close may cross the request. A request that fails on a reused connection before any byte of
/// the answer arrived is sent again once, on a new connection, only when it is a GET (reading
/// twice does no harm) or when not one byte of it was written. Any other failure once bytes
/// were written is reported with `mayHaveArrived`: the server may have carried out a write
/// whose answer was lost, and only the caller (the cluster's rules) may decide what follows.
/// (libcurl, which URLSession used, repeats any request silently in that case.)
final class HTTPTransport: Sendable {
  /// Idle connections kept per server beyond those in use; more are closed.
  private static let idleLimit = 8
  /// Longer idle than this, a connection is closed rather than used: a firewall or NAT on the
  /// way may have forgotten it without a word, and the request would wait out the timeout.
  private static let idleLifetime = Duration.seconds(30)

  private let timeout: Duration
  private let idle = Mutex<[HTTPServer: [IdleConnection]]>([:])

  private struct IdleConnection: Sendable {
    let socket: SocketConnection
    let since: ContinuousClock.Instant
  }

  /// A transport whose connections, reads and writes each take at most `timeout` (GIO counts
  /// it in whole seconds, rounded up), and each answer at most `timeout` in all.
  init(timeout: Duration) {
    self.timeout = timeout
  }

  /// Sends `request` and waits for the answer; throws what kept it from coming (refused,
  /// timed out, TLS, a malformed or oversized answer) as text.
  func send(_ request: HTTPRequest) throws(TransportFailure) -> HTTPResponse {
    guard let server = HTTPServer(request.url) else {
      throw TransportFailure(
        reason: "\(request.url.absoluteString) is not an http or https address", mayHaveArrived: false)
    }
    var message = try request.message(for: server)
    defer { message.withUnsafeMutableBytes { Memory.wipe($0) } }
    if let reused = takeIdle(server) {
      do throws(ExchangeFailure) {
        return try exchange(message, request.method, on: reused, with: server)
      } catch {
        let repeatable = error.nothingSent || (error.closedBeforeAnswer && request.method == "GET")
        guard repeatable else { throw TransportFailure(reason: error.reason, mayHaveArrived: true) }
      }
    }
    let fresh: SocketConnection
    do throws(SocketFailure) {
      fresh = try SocketConnection(to: server.origin, tls: server.isTLS, timeoutSeconds: timeoutSeconds)
    } catch {
      throw TransportFailure(reason: error.reason, mayHaveArrived: false)
    }
    do throws(ExchangeFailure) {
      return try exchange(message, request.method, on: fresh, with: server)
    } catch {
      throw TransportFailure(reason: error.reason, mayHaveArrived: !error.nothingSent)
    }
  }

  /// Writes `message` on `socket` and reads the answer; the connection goes back to the idle
  /// list when it can carry another request.
  private func exchange(_ message: [UInt8], _ method: String, on socket: SocketConnection, with server: HTTPServer)
    throws(ExchangeFailure) -> HTTPResponse
  {
    var written = 0
    let sent = message.withUnsafeBytes { bytes in
      Result { () throws(SocketFailure) in try socket.write(bytes, written: &written) }
    }
    if case .failure(let failure) = sent {
      throw ExchangeFailure(reason: failure.reason, nothingSent: written == 0, closedBeforeAnswer: failure.peerClosed)
    }
    let (response, reusable) = try ResponseReader(socket, deadline: .now + timeout).answer(to: method)
    if reusable { giveBack(socket, to: server) }
    return response
  }

  /// The most recently used idle connection to `server` that is still fit to use; those that
  /// are not are closed (outside the lock: closing a TLS connection writes).
  private func takeIdle(_ server: HTTPServer) -> SocketConnection? {
    while let candidate = idle.withLock({ $0[server]?.popLast() }) {
      if ContinuousClock.now - candidate.since < Self.idleLifetime, !candidate.socket.hasStirredWhileIdle {
        return candidate.socket
      }
    }
    return nil
  }

  private func giveBack(_ socket: SocketConnection, to server: HTTPServer) {
    // One not kept is closed when the caller lets it go, after the lock.
    idle.withLock { idle in
      guard idle[server, default: []].count < Self.idleLimit else { return }
      idle[server, default: []].append(IdleConnection(socket: socket, since: .now))
    }
  }

  /// The timeout in whole seconds, at least one, as GSocketClient takes it.
  private var timeoutSeconds: UInt32 {
    let (seconds, attoseconds) = timeout.components
    return UInt32(clamping: max(1, seconds + (attoseconds > 0 ? 1 : 0)))
  }
}

extension Duration {
  /// The duration in seconds, as Foundation's intervals count.
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// A request that got no HTTP answer.
struct TransportFailure: Error {
  let reason: String
  /// Whether the request may have reached the server (and been carried out): false only when
  /// no connection was made or not one byte of the request was written.
  let mayHaveArrived: Bool
}
