import Foundation
import FoundationNetworking
import Synchronization

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

/// Blocking HTTP requests over URLSession, for callers that are already off Swift's cooperative
/// pool (the persistence core calls stores from its own queues).
///
/// Reads reuse connections. Every other request goes on a connection of its own, closed after
/// its answer: libcurl sends a request again, unseen, when a reused connection dies before any
/// answer, so a write whose node died after carrying it out would come back as the answer to
/// its own repeat, and a refused repeat would hide that the first one was sent.
final class HTTPTransport: Sendable {
  private let reads: URLSession
  private let writes: URLSession

  init(timeout: Duration) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    configuration.timeoutIntervalForRequest = timeout.seconds
    reads = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    writes = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
  }

  deinit {
    reads.invalidateAndCancel()
    writes.invalidateAndCancel()
  }

  /// Sends `request` and waits for the answer; throws the transport's error (refused,
  /// timed out, TLS) as text.
  func send(_ request: URLRequest) throws(TransportFailure) -> HTTPResponse {
    var request = request
    let isRead = request.httpMethod == "GET"
    // The writes' pool never keeps a connection, so none of them is ever reused.
    if !isRead { request.setValue("close", forHTTPHeaderField: "Connection") }
    let session = isRead ? reads : writes
    let outcome = Mutex<Result<HTTPResponse, TransportFailure>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let task = session.dataTask(with: request) { data, response, error in
      let result: Result<HTTPResponse, TransportFailure>
      if let response = response as? HTTPURLResponse, error == nil {
        result = .success(
          HTTPResponse(
            status: response.statusCode, body: data ?? Data(), location: response.value(forHTTPHeaderField: "Location"),
            index: response.value(forHTTPHeaderField: "X-Vault-Index")))
      } else {
        result = .failure(TransportFailure(error))
      }
      outcome.withLock { $0 = result }
      done.signal()
    }
    task.resume()
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw TransportFailure(nil) }
    return try result.get()
  }
}

/// Hands redirects to the caller instead of following them: a standby points at the node it
/// believes active, which may be the one that just died, and only the caller knows the others.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    completionHandler(nil)
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
  /// no connection was made.
  let mayHaveArrived: Bool

  init(_ error: (any Error)?) {
    reason = error.map { $0.localizedDescription } ?? "no HTTP answer"
    let notSent: Set<URLError.Code> = [
      .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .badURL, .unsupportedURL,
    ]
    mayHaveArrived = (error as? URLError).map { !notSent.contains($0.code) } ?? true
  }
}
