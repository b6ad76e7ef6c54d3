// An HTTP/1.1 answer read from a connection as it arrives: the status line and fields, then a
// body of a stated length, in chunks, or up to the server's close, within bounds that a hostile
// server cannot push past (it could otherwise fill this process's memory).
import Foundation
import SecretMemory
import SystemCalls

/// Why an exchange failed, and how far it got: what the transport needs to tell whether the
/// server may have carried the request out, and whether sending it again is safe.
struct ExchangeFailure: Error {
  let reason: String
  /// Not one byte of the request was written: the server cannot have seen it.
  var nothingSent = false
  /// The server closed (or reset) the connection before any byte of its answer arrived.
  var closedBeforeAnswer = false
}

/// Reads one answer from a connection. Its buffers, which hold the secret the answer carries,
/// are wiped when it goes.
final class ResponseReader {
  /// The status lines and fields of one answer (informational ones included) and the trailer
  /// of a chunked body, each at most this size.
  static let headLimit = 64 * 1024
  /// Twice the largest request OpenBao takes by default (`max_request_size`, 32 MiB): a secret
  /// as large as a server accepts reads back with room for JSON's escapes.
  static let bodyLimit = 64 * 1024 * 1024

  private let socket: SocketConnection
  private let deadline: ContinuousClock.Instant
  /// Bytes received; those before `position` are parsed.
  private var received: [UInt8] = []
  private var position = 0
  private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

  init(_ socket: SocketConnection, deadline: ContinuousClock.Instant) {
    self.socket = socket
    self.deadline = deadline
  }

  deinit {
    received.withUnsafeMutableBytes { Memory.wipe($0) }
    scratch.withUnsafeMutableBytes { Memory.wipe($0) }
  }

  /// The answer to a `method` request, and whether the connection may carry another request.
  func answer(to method: String) throws(ExchangeFailure) -> (HTTPResponse, reusable: Bool) {
    var head = try readHead()
    // 1xx answers (103 Early Hints) come before the real one; they count towards one limit.
    var headBytes = head.size
    while (100..<200).contains(head.status) {
      head = try readHead()
      headBytes += head.size
      guard headBytes <= Self.headLimit else { throw refusal("the answer's header fields exceed 64 KiB") }
    }
    var reusable = head.keepsAlive
    let body: Data
    if method == "HEAD" || head.status == 204 || head.status == 304 {
      body = Data()
    } else if head.isChunked {
      body = try readChunks()
      // Both framings named: a proxy on the way may have read the other one (RFC 9112, 6.3).
      if head.fields["content-length"] != nil { reusable = false }
    } else if let length = try head.contentLength() {
      guard length <= Self.bodyLimit else { throw refusal("the answer's body exceeds 64 MiB") }
      try fill(until: length)
      body = Data(received[position..<position + length])
      position += length
    } else {
      body = try readUntilClose()
      reusable = false
    }
    // Bytes past the answer were never asked for: the connection's state is unknown.
    reusable = reusable && position == received.count
    let response = HTTPResponse(
      status: head.status, body: body, location: head.fields["location"], index: head.fields["x-vault-index"])
    return (response, reusable)
  }

  // MARK: Parts of an answer

  private func readHead() throws(ExchangeFailure) -> Head {
    let end = try readLine(endingAt: [13, 10, 13, 10], limit: Self.headLimit, what: "header fields")
    let head = try Head(received[position..<end], size: end + 4 - position)
    position = end + 4
    return head
  }

  /// A chunked body: each chunk's size in hex (and extensions after `;`), its bytes, CRLF;
  /// a chunk of size 0, then trailer fields up to an empty line.
  private func readChunks() throws(ExchangeFailure) -> Data {
    // SecretBytes wipes its old block when it grows: the body is a secret.
    let body = SecretBytes()
    while true {
      let end = try readLine(endingAt: [13, 10], limit: 1024, what: "a chunk's size line")
      let digits = received[position..<end].prefix { $0 != UInt8(ascii: ";") }.filter { $0 != 32 && $0 != 9 }
      position = end + 2
      guard !digits.isEmpty, digits.count <= 15, digits.allSatisfy({ Self.isHexDigit($0) }),
        let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
      else { throw refusal("the server's answer has a malformed chunk size") }
      if size == 0 { break }
      guard body.count + size <= Self.bodyLimit else { throw refusal("the answer's body exceeds 64 MiB") }
      try fill(until: size + 2)
      body.append(contentsOf: received[position..<position + size])
      guard received[position + size] == 13, received[position + size + 1] == 10 else {
        throw refusal("the server's answer has a chunk without its CRLF")
      }
      position += size + 2
    }
    let trailerStart = position
    while true {
      let end = try readLine(endingAt: [13, 10], limit: Self.headLimit, what: "trailer fields")
      let empty = end == position
      position = end + 2
      if empty { return body.withUnsafeBytes { Data($0) } }
      guard position - trailerStart <= Self.headLimit else { throw refusal("the answer's trailer exceeds 64 KiB") }
    }
  }

  private func readUntilClose() throws(ExchangeFailure) -> Data {
    while try receive() {
      guard received.count - position <= Self.bodyLimit else { throw refusal("the answer's body exceeds 64 MiB") }
    }
    defer { position = received.count }
    return Data(received[position...])
  }

  // MARK: Receiving

  /// The index where `terminator` starts, after `position`, reading until it comes; more than
  /// `limit` bytes before it is an error that names `what`.
  private func readLine(endingAt terminator: [UInt8], limit: Int, what: String) throws(ExchangeFailure) -> Int {
    // Counted from `position`: receiving may move the unparsed bytes to the buffer's start.
    var searched = 0
    while true {
      if let found = Self.find(terminator, in: received, from: position + searched) {
        guard found - position <= limit else { break }
        return found
      }
      guard received.count - position <= limit else { break }
      searched = max(0, received.count - position - terminator.count + 1)
      guard try receive() else { throw closure() }
    }
    throw refusal("the answer's \(what) exceed \(limit / 1024) KiB")
  }

  /// Receives until `count` bytes after `position` have arrived.
  private func fill(until count: Int) throws(ExchangeFailure) {
    while received.count - position < count {
      guard try receive() else { throw closure() }
    }
  }

  /// Appends `bytes` to what was received; when the array must grow, the block it leaves is
  /// wiped first (an answer holds secrets, and Array's growth would free it as it is).
  private func appendWiping(_ bytes: ArraySlice<UInt8>) {
    if received.count + bytes.count > received.capacity {
      var grown: [UInt8] = []
      grown.reserveCapacity(max(received.capacity * 2, received.count + bytes.count))
      grown.append(contentsOf: received)
      received.withUnsafeMutableBytes { Memory.wipe($0) }
      received = grown
    }
    received.append(contentsOf: bytes)
  }

  /// Receives what the server sent next; false when it closed the connection.
  private func receive() throws(ExchangeFailure) -> Bool {
    guard ContinuousClock.now < deadline else { throw refusal("no complete answer within the request timeout") }
    if position > Self.headLimit, position * 2 > received.count {
      // The tail moves to a new array and the old one is wiped whole: shifting in place would
      // leave stale bytes past the new end.
      let tail = Array(received[position...])
      received.withUnsafeMutableBytes { Memory.wipe($0) }
      (received, position) = (tail, 0)
    }
    let outcome = scratch.withUnsafeMutableBytes { buffer in
      Result { () throws(SocketFailure) in try socket.read(into: buffer) }
    }
    switch outcome {
    case .success(let count):
      appendWiping(scratch[..<count])
      return count > 0
    case .failure(let failure):
      throw ExchangeFailure(reason: failure.reason, closedBeforeAnswer: failure.peerClosed && received.isEmpty)
    }
  }

  private func closure() -> ExchangeFailure {
    received.isEmpty
      ? ExchangeFailure(reason: "the server closed the connection without answering", closedBeforeAnswer: true)
      : ExchangeFailure(reason: "the server closed the connection in the middle of its answer")
  }

  private func refusal(_ reason: String) -> ExchangeFailure { ExchangeFailure(reason: reason) }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
    return (start...(haystack.count - needle.count)).first { index in
      needle.indices.allSatisfy { haystack[index + $0] == needle[$0] }
    }
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
  }
}

/// An answer's status line and header fields, parsed as the bytes they are: HTTP's syntax is
/// ASCII, and a field's value is kept as UTF-8 text.
private struct Head {
  let status: Int
  /// Field names in lower case; a repeated field's values joined with `, `.
  let fields: [String: String]
  let keepsAlive: Bool
  /// Bytes of the status line and fields, with their blank line.
  let size: Int

  /// `bytes` are the status line and fields, each ended by CRLF but the last (the blank line
  /// that ends them is not included). A CR or LF anywhere else is refused: a parser on the way
  /// that took it for the end of a line would frame the answer otherwise. So is a status line
  /// that is not `HTTP/1.x NNN …`.
  init(_ bytes: ArraySlice<UInt8>, size: Int) throws(ExchangeFailure) {
    var lines = try Self.lines(of: bytes)[...]
    guard let statusLine = lines.popFirst(), statusLine.starts(with: "HTTP/1.".utf8), statusLine.count >= 12,
      case let digits = statusLine.dropFirst(9).prefix(3),
      digits.allSatisfy(Self.isDigit), digits.first != UInt8(ascii: "0")
    else { throw ExchangeFailure(reason: "the server's answer is not HTTP/1.x") }
    var fields: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
      let name = String(decoding: line[..<colon].map(Self.lowercased), as: UTF8.self)
      let value = String(decoding: Self.trimmed(line[(colon + 1)...]), as: UTF8.self)
      fields[name] = fields[name].map { "\($0), \(value)" } ?? value
    }
    let connection = Set(Self.elements(of: fields["connection"] ?? ""))
    // HTTP/1.1 keeps the connection unless told otherwise; HTTP/1.0 only when told to.
    keepsAlive =
      !connection.contains("close") && (statusLine.starts(with: "HTTP/1.1".utf8) || connection.contains("keep-alive"))
    status = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    (self.fields, self.size) = (fields, size)
  }

  /// The lines of `bytes`, split where CRLF is; a CR or LF that is not part of one is refused.
  private static func lines(of bytes: ArraySlice<UInt8>) throws(ExchangeFailure) -> [ArraySlice<UInt8>] {
    let (cr, lf) = (UInt8(ascii: "\r"), UInt8(ascii: "\n"))
    var lines: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    var index = bytes.startIndex
    while index < bytes.endIndex {
      guard bytes[index] == cr || bytes[index] == lf else {
        index += 1
        continue
      }
      guard bytes[index] == cr, index + 1 < bytes.endIndex, bytes[index + 1] == lf else {
        throw ExchangeFailure(reason: "the server's answer has a lone CR or LF in its header fields")
      }
      lines.append(bytes[start..<index])
      index += 2
      start = index
    }
    lines.append(bytes[start...])
    return lines
  }

  /// The comma-separated elements of a field's value, without the blanks around them, in lower
  /// case for ASCII letters only: HTTP's tokens are ASCII, and Unicode's rules would turn other
  /// letters into some (the Kelvin sign into `k`).
  private static func elements(of value: String) -> [String] {
    value.utf8.split(separator: UInt8(ascii: ",")).map {
      String(decoding: trimmed(ArraySlice($0)).map(lowercased), as: UTF8.self)
    }
  }

  private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

  private static func lowercased(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
  }

  /// Without the spaces and tabs around it.
  private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) })
    else { return [] }
    return bytes[first...last]
  }

  /// `Transfer-Encoding` ends in `chunked`.
  var isChunked: Bool {
    fields["transfer-encoding"].map(Self.elements)?.last == "chunked"
  }

  /// `Content-Length`, nil when absent. Repeats that disagree, or a value that is not a
  /// number, are refused: the body's end would be a guess.
  func contentLength() throws(ExchangeFailure) -> Int? {
    guard let text = fields["content-length"] else { return nil }
    let values = Set(Self.elements(of: text))
    guard values.count == 1, let value = values.first, !value.isEmpty, value.count <= 18,
      value.utf8.allSatisfy(Self.isDigit), let length = Int(value)
    else { throw ExchangeFailure(reason: "the server's answer has an invalid Content-Length") }
    return length
  }
}
