import Foundation
import SecretTestSupport

/// A python HTTP proxy in front of one OpenBao node that relays every request, except that,
/// once its ``WriteHold`` is armed, it holds the answer of the next KV write: the node has
/// carried the write out, the client waits, and the test can kill the cluster's leader while
/// the save is in flight. Released, the proxy drops the connection, so the client never hears
/// that the write landed. Proxies in front of several nodes may share one hold.
final class WriteHoldingProxy: Sendable {
  /// `http://127.0.0.1:PORT`, to list among the cluster's addresses.
  let address: String
  let hold: WriteHold
  private let process: ChildProcess

  /// A proxy with a hold of its own, in `directory`.
  convenience init(to target: String, in directory: URL) async throws {
    try await self.init(to: target, hold: WriteHold(in: directory))
  }

  init(to target: String, hold: WriteHold) async throws {
    let port = try freeLoopbackPort()
    address = "http://127.0.0.1:\(port)"
    self.hold = hold
    let control = hold.control
    guard let target = URL(string: target), let host = target.host(), let targetPort = target.port else {
      throw HarnessError("not a node address: \(target)")
    }
    let script = """
      import http.client, http.server, os, sys, time
      host, port, control, listen = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
      arm, held, release = (os.path.join(control, name) for name in ("arm", "held", "release"))
      def claim():
          try:
              os.remove(arm)
              return True
          except FileNotFoundError:
              return False
      class Relay(http.server.BaseHTTPRequestHandler):
          protocol_version = "HTTP/1.1"
          def relay(self):
              length = int(self.headers.get("Content-Length") or 0)
              body = self.rfile.read(length) if length else None
              headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
              try:
                  node = http.client.HTTPConnection(host, port, timeout=120)
                  node.request(self.command, self.path, body=body, headers=headers)
                  answer = node.getresponse()
                  data = answer.read()
              except Exception:
                  self.close_connection = True
                  return
              if self.command != "GET" and "/data/" in self.path and claim():
                  open(held, "w").close()
                  while not os.path.exists(release):
                      time.sleep(0.01)
                  self.close_connection = True
                  return
              self.send_response(answer.status)
              for name, value in answer.getheaders():
                  if name.lower() not in ("connection", "content-length", "transfer-encoding"):
                      self.send_header(name, value)
              self.send_header("Content-Length", str(len(data)))
              self.end_headers()
              self.wfile.write(data)
          do_GET = do_POST = do_PUT = do_DELETE = do_LIST = relay
          def log_message(self, *arguments): pass
      http.server.ThreadingHTTPServer(("127.0.0.1", listen), Relay).serve_forever()
      """
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    process = try ChildProcess(
      URL(filePath: "/usr/bin/python3"), ["-c", script, host, String(targetPort), control.path, String(port)],
      environment: environmentWithoutBus, stdin: null, stdout: null, stderr: null)
    try await eventually("the proxy to listen on port \(port)") { isListening(port: port) }
  }

  func stop() {
    process.signal(SIGTERM)
    process.wait()
  }
}

/// What the test tells proxies through files in a folder: hold the next write, and drop it.
struct WriteHold: Sendable {
  let control: URL

  init(in directory: URL) throws {
    control = directory.appending(path: "hold-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: control, withIntermediateDirectories: true)
  }

  /// Holds the answer of the next write that passes any of the proxies.
  func holdNextWrite() throws {
    guard FileManager.default.createFile(atPath: control.appending(path: "arm").path, contents: nil) else {
      throw HarnessError("cannot arm the proxy")
    }
  }

  /// Whether the node has carried the held write out and the proxy holds its answer.
  var isHolding: Bool { FileManager.default.fileExists(atPath: control.appending(path: "held").path) }

  /// Drops the held write's connection without its answer.
  func dropHeldAnswer() throws {
    guard FileManager.default.createFile(atPath: control.appending(path: "release").path, contents: nil) else {
      throw HarnessError("cannot release the proxy")
    }
  }

  /// Ready to hold another write: the last one's marks removed.
  func resetHold() throws {
    for name in ["held", "release"] { try FileManager.default.removeItem(at: control.appending(path: name)) }
  }
}
