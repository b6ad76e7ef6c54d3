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
final class HTTPTransport: Sendable {
  private let session: URLSession

  init(timeout: Duration) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    configuration.timeoutIntervalForRequest = timeout.seconds
    session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
  }

  deinit { session.invalidateAndCancel() }

  /// Sends `request` and waits for the answer; throws the transport's error (refused,
  /// timed out, TLS) as text.
  func send(_ request: URLRequest) throws(TransportFailure) -> HTTPResponse {
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
        result = .failure(TransportFailure(reason: error.map { $0.localizedDescription } ?? "no HTTP answer"))
      }
      outcome.withLock { $0 = result }
      done.signal()
    }
    task.resume()
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw TransportFailure(reason: "no answer") }
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
}
