import Foundation
import SecretTestSupport
import Testing

@testable import SecretsOpenBao

// The HTTP client under OpenBaoClient: kept-alive connections, answers in every framing a
// server may choose, bounds a hostile server cannot push past, and when a request may be sent
// twice. Against the real `bao` dev server, and a scripted server for what bao never does.
extension OpenBaoTests {
  @Suite("OpenBao's HTTP transport")
  struct HTTPTransportTests {
    @Test func readsAndWritesShareOneKeptAliveConnection() throws {
      let server = try ScriptedHTTPServer { request in
        request.method == "GET"
          ? .json(#"{"data":{"data":{"value":"v"},"metadata":{"version":1}}}"#)
          : .json(#"{"data":{"version":1}}"#)
      }
      defer { server.stop() }
      let client = OpenBaoClient(
        OpenBaoConfiguration(addresses: [try #require(URL(string: server.address))], authentication: .token("t")))
      for round in 0..<3 {
        try client.write("a", fields: ["value": "\(round)"], checkAndSet: nil)
        #expect(try client.read("a")?.field("value") == "v")
      }
      let secrets = server.requests.filter { $0.target == "/v1/secret/data/a" }
      #expect(secrets.map(\.method) == ["POST", "GET", "POST", "GET", "POST", "GET"])
      #expect(secrets.allSatisfy { $0.fields["connection"] == "keep-alive" && $0.fields["x-vault-token"] == "t" })
      #expect(server.connectionCount == 1, "\(server.requests.count) requests")
    }

    @Test func aLargeSecretRoundTripsThroughTheRealServer() async throws {
      try await withOpenBao { server async throws in
        let client = OpenBaoClient(server.configuration())
        // Go's net/http sends an answer this large in chunks.
        let large = String((0..<300_000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement() ?? "a" })
        try client.write("large", fields: ["value": large], checkAndSet: 0)
        #expect(try server.value(at: "large") == large)
        #expect(try client.read("large")?.field("value") == large)
        try client.write("large", fields: ["value": "small"], checkAndSet: 1)
        #expect(try client.read("large")?.field("value") == "small")
      }
    }

    @Test func aChunkedAnswerWithExtensionsAndTrailersIsReadWhole() throws {
      let (responses, connections) = try exchanges(
        2,
        answeredWith: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Vault-Index: seven\r\n\r\n"
          + "5;name=x\r\n{\"a\":\r\n3\r\n\"b\"\r\n1\r\n}\r\n0\r\nTrailer: here\r\n\r\n")
      for response in responses {
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"a":"b"}"#)
        #expect(response.index == "seven")
      }
      #expect(connections == 1, "the connection is reused after a chunked answer")
    }

    @Test func informationalAnswersAndBodilessOnesLeaveTheConnectionReusable() throws {
      let server = try ScriptedHTTPServer { request in
        request.number == 0
          ? .send("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 204 No Content\r\nContent-Type: x\r\n\r\n")
          : .json("{}")
      }
      defer { server.stop() }
      let transport = HTTPTransport(timeout: .seconds(5))
      #expect(try transport.send(try server.get()).status == 204)
      let second = try transport.send(try server.get())
      #expect(second.status == 200 && second.body == Data("{}".utf8))
      #expect(server.connectionCount == 1)
    }

    @Test func aServerThatSaysConnectionCloseGetsANewConnectionNextTime() throws {
      // The scripted server would answer a second request on the first connection: only the
      // client's reading of `Connection: close` makes it open another.
      let (responses, connections) = try exchanges(
        3, answeredWith: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
      for response in responses { #expect(response.status == 200) }
      #expect(connections == 3)
    }

    @Test func fieldNamesInAnyCaseAndValuesPaddedWithBlanksAreReadAsHTTPDefinesThem() throws {
      let (responses, connections) = try exchanges(
        2,
        answeredWith: "HTTP/1.1 200 OK\r\ncontent-LENGTH: \t2 \r\nX-VAULT-INDEX:\tseven  \r\n"
          + "CONNECTION:  Keep-Alive, CLOSE\r\n\r\n{}")
      for response in responses {
        #expect(response.status == 200 && response.body == Data("{}".utf8))
        #expect(response.index == "seven")
      }
      #expect(connections == 2, "`close` among the Connection field's options is read, in any case")
    }

    @Test func aStatusLineThatIsNotHTTPOneIsRefused() throws {
      for statusLine in ["HTTP/1.1 2x0 OK", "HTTP/1.1 099 Low", "HTTP/2 200 OK", "ICY 200 OK"] {
        let reason = try refusal(of: "\(statusLine)\r\nContent-Length: 2\r\n\r\n{}")
        #expect(reason == "the server's answer is not HTTP/1.x", "\(statusLine)")
      }
    }

    @Test func aLoneCROrLFInTheHeaderFieldsIsRefused() throws {
      // Each would let a parser that ends lines at a lone LF (or CR) frame the answer otherwise.
      let heads = [
        "HTTP/1.1 200 OK\r\nA: b\r\n\nContent-Length: 2", "HTTP/1.1 200 OK\nContent-Length: 2",
        "HTTP/1.1 200 OK\r\nContent-Length:\r2",
      ]
      for head in heads {
        let reason = try refusal(of: "\(head)\r\n\r\n{}")
        #expect(reason == "the server's answer has a lone CR or LF in its header fields", "\(head.debugDescription)")
      }
    }

    @Test func aTransferCodingIsChunkedOnlyWhenItsASCIILettersSaySo() throws {
      // Unicode's lowercasing turns the Kelvin sign into `k`: "chun\u{212A}ed" is another coding,
      // so the body runs to the close, as for any coding this client does not know.
      let chunks = "2\r\n{}\r\n0\r\n\r\n"
      let server = try ScriptedHTTPServer { _ in
        .sendThenClose("HTTP/1.1 200 OK\r\nTransfer-Encoding: chun\u{212A}ed\r\n\r\n\(chunks)")
      }
      defer { server.stop() }
      let response = try HTTPTransport(timeout: .seconds(5)).send(try server.get())
      #expect(response.body == Data(chunks.utf8))
    }

    @Test func aLocationIsSentWithEveryByteAPathCannotHoldPercentEncoded() throws {
      let address = try #require(URL(string: "http://127.0.0.1:8200/"))
      let url = OpenBaoClient.url(address, "secret/data/a b/%41/é;?#[]/x-._~!$&'()*+,=:@", query: "version=2")
      #expect(
        url.absoluteString
          == "http://127.0.0.1:8200/v1/secret/data/a%20b/%2541/%C3%A9%3B%3F%23%5B%5D/x-._~!$&'()*+,=:@?version=2")
    }

    @Test func aRedirectIsAnsweredNotFollowed() throws {
      let server = try ScriptedHTTPServer { _ in
        .send("HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/v1/x\r\nContent-Length: 0\r\n\r\n")
      }
      defer { server.stop() }
      let response = try HTTPTransport(timeout: .seconds(5)).send(try server.get())
      #expect(response.status == 307)
      #expect(response.location == "http://127.0.0.1:1/v1/x")
    }

    @Test func oversizedFieldsAndBodiesAreRefusedWithAClearError() throws {
      let padding = String(repeating: "x", count: 70 * 1024)
      let server = try ScriptedHTTPServer { request in
        switch request.target {
        case "/v1/fields": .send("HTTP/1.1 200 OK\r\nX-Padding: \(padding)\r\nContent-Length: 0\r\n\r\n")
        case "/v1/length": .send("HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n")
        case "/v1/chunk": .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFF\r\n")
        default: .json("{}")
        }
      }
      defer { server.stop() }
      let transport = HTTPTransport(timeout: .seconds(5))
      for (path, limit) in [("fields", "header fields exceed 64 KiB"), ("length", "64 MiB"), ("chunk", "64 MiB")] {
        let failure = #expect(throws: TransportFailure.self) { try transport.send(try server.get(path)) }
        #expect(failure?.reason.contains(limit) == true, "\(path): \(failure?.reason ?? "")")
      }
      // Positive control: the same server's ordinary answer is read.
      #expect(try transport.send(try server.get("ordinary")).status == 200)
    }

    @Test func aCloseThatCrossesAGetIsRetriedWhileAPostMayHaveArrived() throws {
      // Request 1 arrives on the reused connection, and the server closes it unanswered, as a
      // server closing an idle connection does when the request crosses the close.
      let server = try ScriptedHTTPServer { request in request.number == 1 ? .close : .json("{}") }
      defer { server.stop() }
      let reads = HTTPTransport(timeout: .seconds(5))
      #expect(try reads.send(try server.get()).status == 200)
      #expect(try reads.send(try server.get()).status == 200, "the GET is sent again on a new connection")
      #expect(server.requests.count == 3 && server.connectionCount == 2)

      let posting = try ScriptedHTTPServer { request in request.number == 1 ? .close : .json("{}") }
      defer { posting.stop() }
      let writes = HTTPTransport(timeout: .seconds(5))
      #expect(try writes.send(try posting.post()).status == 200)
      let failure = #expect(throws: TransportFailure.self) { try writes.send(try posting.post()) }
      #expect(failure?.mayHaveArrived == true)
      #expect(posting.requests.count == 2, "the POST is not sent again")
    }

    @Test func aConnectionTheServerClosedWhileIdleIsNotUsed() async throws {
      let server = try ScriptedHTTPServer { request in
        request.number == 0 ? .sendThenClose("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") : .json("{}")
      }
      defer { server.stop() }
      let transport = HTTPTransport(timeout: .seconds(5))
      #expect(try transport.send(try server.post()).status == 200)
      try await eventually("the server to close the connection") { server.closedCount == 1 }
      // A POST cannot be sent again: had it gone on the closed connection, it would fail.
      #expect(try transport.send(try server.post()).status == 200)
      #expect(server.connectionCount == 2)
    }

    @Test func aServerThatNeverAnswersTimesOut() throws {
      let server = try ScriptedHTTPServer { _ in .silence }
      defer { server.stop() }
      let transport = HTTPTransport(timeout: .seconds(1))
      let start = ContinuousClock.now
      let failure = #expect(throws: TransportFailure.self) { try transport.send(try server.get()) }
      #expect(ContinuousClock.now - start < .seconds(5))
      #expect(failure?.mayHaveArrived == true)
      #expect(failure?.reason.lowercased().contains("timed out") == true, "\(failure?.reason ?? "")")
    }

    @Test func aFieldWithALineBreakIsRefusedBeforeAnythingIsSent() throws {
      let server = try ScriptedHTTPServer { _ in .json("{}") }
      defer { server.stop() }
      var request = try server.get()
      request.headers.append(("X-Vault-Token", "t\r\nX-Injected: 1"))
      let failure = #expect(throws: TransportFailure.self) { try HTTPTransport(timeout: .seconds(5)).send(request) }
      #expect(failure?.mayHaveArrived == false)
      #expect(server.connectionCount == 0)
    }

    @Test func httpsRefusesACertificateNoTrustedAuthoritySigned() async throws {
      let folder = FileManager.default.temporaryDirectory.appending(path: "bao-tls-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      try runProcess(
        "openssl",
        [
          "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
          "subjectAltName=IP:127.0.0.1", "-keyout", folder.appending(path: "key.pem").path, "-out",
          folder.appending(path: "cert.pem").path,
        ], environment: environmentWithoutBus, in: folder
      ).expectSuccess()
      let server = try await TLSServer(in: folder)
      defer { server.stop() }
      let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/v1/x"))
      let failure = #expect(throws: TransportFailure.self) {
        try HTTPTransport(timeout: .seconds(5)).send(HTTPRequest(method: "GET", url: url))
      }
      #expect(failure?.reason.contains("certificate") == true, "\(failure?.reason ?? "")")
      #expect(failure?.mayHaveArrived == false)
      #expect(server.requests() == 0)
      // Positive control: a client that trusts the certificate is answered.
      let trusting = try runProcess(
        "/usr/bin/python3",
        [
          "-c",
          "import ssl, sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], "
            + "context=ssl.create_default_context(cafile=sys.argv[2])).read().decode())",
          url.absoluteString, folder.appending(path: "cert.pem").path,
        ], environment: environmentWithoutBus, in: folder)
      #expect(trusting.stdoutText.hasPrefix("{}"), "\(trusting.stderrText)")
      #expect(server.requests() == 1)
    }

    @Test func aServerThatRefusesConnectionsIsReportedAsNotReached() throws {
      let url = try #require(URL(string: "http://127.0.0.1:\(try freeLoopbackPort())/v1/x"))
      let failure = #expect(throws: TransportFailure.self) {
        try HTTPTransport(timeout: .seconds(5)).send(HTTPRequest(method: "POST", url: url, body: Data("{}".utf8)))
      }
      #expect(failure?.mayHaveArrived == false)
    }
  }
}

/// The answers to `count` GETs sent on one transport to a server that always sends `answer`, and
/// how many connections they took.
func exchanges(_ count: Int, answeredWith answer: String) throws -> (responses: [HTTPResponse], connections: Int) {
  let server = try ScriptedHTTPServer { _ in .send(answer) }
  defer { server.stop() }
  let transport = HTTPTransport(timeout: .seconds(5))
  let responses = try (0..<count).map { _ in try transport.send(try server.get()) }
  return (responses, server.connectionCount)
}

/// Why the transport refused `answer`, sent whole by a server that then closes; nil when it read
/// it.
func refusal(of answer: String) throws -> String? {
  let server = try ScriptedHTTPServer { _ in .sendThenClose(answer) }
  defer { server.stop() }
  do {
    _ = try HTTPTransport(timeout: .seconds(5)).send(try server.get())
    return nil
  } catch let failure as TransportFailure {
    return failure.reason
  }
}

extension ScriptedHTTPServer {
  func get(_ path: String = "x") throws -> HTTPRequest {
    HTTPRequest(method: "GET", url: try #require(URL(string: "\(address)/v1/\(path)")))
  }

  func post(_ path: String = "x") throws -> HTTPRequest {
    HTTPRequest(
      method: "POST", url: try #require(URL(string: "\(address)/v1/\(path)")),
      headers: [("Content-Type", "application/json")], body: Data(#"{"data":{}}"#.utf8))
  }
}

/// A python HTTPS server with the certificate and key in `folder` (`cert.pem`, `key.pem`).
final class TLSServer: Sendable {
  let port: Int
  private let process: ChildProcess
  private let log: URL

  init(in folder: URL) async throws {
    port = try freeLoopbackPort()
    log = folder.appending(path: "requests.log")
    guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
      throw HarnessError("cannot create \(log.path)")
    }
    let script = """
      import http.server, ssl, sys
      port, folder, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
      class Answer(http.server.BaseHTTPRequestHandler):
          def do_GET(self):
              open(log, "a").write("request\\n")
              self.send_response(200)
              self.send_header("Content-Length", "2")
              self.end_headers()
              self.wfile.write(b"{}")
          def log_message(self, *arguments): pass
      server = http.server.HTTPServer(("127.0.0.1", port), Answer)
      context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
      context.load_cert_chain(folder + "/cert.pem", folder + "/key.pem")
      server.socket = context.wrap_socket(server.socket, server_side=True)
      server.serve_forever()
      """
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    process = try ChildProcess(
      URL(filePath: "/usr/bin/python3"), ["-c", script, String(port), folder.path, log.path],
      environment: environmentWithoutBus, stdin: null, stdout: null, stderr: null)
    try await eventually("the TLS server to listen on port \(port)") { [port] in isListening(port: port) }
  }

  func requests() -> Int {
    ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").count
  }

  func stop() {
    process.signal(SIGTERM)
    process.wait()
  }
}
