import Foundation

/// One HTTP request to a server of the cluster.
struct HTTPRequest: Sendable {
  var method: String
  /// `http://` or `https://`, the path percent-encoded as it is to be sent.
  var url: URL
  /// Fields besides those the transport writes itself (Host, Connection, Content-Length).
  var headers: [(name: String, value: String)] = []
  var body: Data?

  /// The request as it goes on the wire, for `server`. Holds the token: the caller wipes it.
  /// A line break or NUL in any part (a token file's stray `\r`) is refused before anything is
  /// sent: it would end the field and start another that the caller never wrote.
  func message(for server: HTTPServer) throws(TransportFailure) -> [UInt8] {
    var target = url.path(percentEncoded: true)
    if target.isEmpty { target = "/" }
    if let query = url.query(percentEncoded: true) { target += "?" + query }
    var fields = [("Host", server.hostField), ("Connection", "keep-alive")] + headers
    if let body {
      fields.append(("Content-Length", String(body.count)))
    } else if !["GET", "HEAD", "DELETE"].contains(method) {
      fields.append(("Content-Length", "0"))
    }
    let breaks: Set<UInt8> = [0, UInt8(ascii: "\r"), UInt8(ascii: "\n")]
    let parts = [method, target] + fields.flatMap { [$0.0, $0.1] }
    guard parts.allSatisfy({ !$0.utf8.contains(where: breaks.contains) }) else {
      throw TransportFailure(
        reason: "a request field or path holds a line break or NUL; check the token's source", mayHaveArrived: false)
    }
    let lines = [method, " ", target, " HTTP/1.1\r\n"] + fields.flatMap { [$0.0, ": ", $0.1, "\r\n"] } + ["\r\n"]
    // Sized exactly, so the array never grows: growing would free a block holding the token.
    var bytes: [UInt8] = []
    bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count } + (body?.count ?? 0))
    for part in lines { bytes.append(contentsOf: part.utf8) }
    if let body { bytes.append(contentsOf: body) }
    return bytes
  }
}

/// The scheme, host and port a request goes to: the connections it may share.
struct HTTPServer: Hashable, Sendable {
  let isTLS: Bool
  /// `http://HOST:PORT`, the host of an IPv6 address in brackets.
  let origin: String
  /// The Host field: the host, and the port when the address names one.
  let hostField: String

  /// Nil for any scheme but http and https, or an address without a host.
  init?(_ url: URL) {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host(percentEncoded: true), !host.isEmpty
    else { return nil }
    let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    isTLS = scheme == "https"
    origin = "\(scheme)://\(bracketed):\(url.port ?? (isTLS ? 443 : 80))"
    hostField = url.port.map { "\(bracketed):\($0)" } ?? bracketed
  }
}
