public import Foundation
import Synchronization

/// Three `bao server` nodes replicating with Raft on loopback, initialised, unsealed, all voters,
/// with KV v2 at `secret/`: what a fleet runs, small. Each node has a folder of its own.
public final class OpenBaoCluster: Sendable {
  /// How quickly the nodes notice a dead leader and elect another.
  public enum RaftTiming: Sendable {
    /// `performance_multiplier = 1`: elections in a second or two.
    case fast
    /// OpenBao's own default (a multiplier of 5, for production networks): elections take
    /// several seconds, often longer than a client's request timeout.
    case openBaoDefault
  }

  /// Each node's API address, `http://127.0.0.1:PORT`.
  public let addresses: [String]
  public let rootToken: String
  public let directory: URL
  private let nodes: Mutex<[ChildProcess?]>

  /// Starts and joins the nodes; waits until all three vote and KV v2 takes writes.
  public init(raftTiming: RaftTiming = .fast) async throws {
    directory = try makeTemporaryDirectory()
    let ports = try freeLoopbackPorts(6)
    addresses = (0..<3).map { "http://127.0.0.1:\(ports[$0])" }
    var started: [ChildProcess?] = []
    for node in 0..<3 {
      started.append(
        try Self.start(
          node: node, apiPort: ports[node], clusterPort: ports[node + 3], raftTiming: raftTiming, in: directory))
    }
    nodes = Mutex(started)
    let first = addresses[0]
    try await Self.waitUntilAnswering(addresses, in: directory)
    let initialised = try Self.bao(
      ["operator", "init", "-key-shares=1", "-key-threshold=1", "-format=json"],
      address: first, token: nil, in: directory)
    guard initialised.status == 0,
      let json = try JSONSerialization.jsonObject(with: Data(initialised.stdout)) as? [String: Any],
      let key = (json["unseal_keys_b64"] as? [String])?.first, let root = json["root_token"] as? String
    else { throw HarnessError("bao operator init failed: \(initialised.stderrText)") }
    rootToken = root
    try Self.bao(["operator", "unseal", key], address: first, token: nil, in: directory).expectSuccess()
    try await eventually("the first node to become active", seconds: 60) { [directory] in
      try Self.bao(
        ["operator", "raft", "autopilot", "set-config", "-server-stabilization-time=1s"],
        address: first, token: root, in: directory
      ).status == 0
    }
    for address in addresses.dropFirst() {
      try Self.bao(["operator", "raft", "join", first], address: address, token: nil, in: directory).expectSuccess()
      try Self.bao(["operator", "unseal", key], address: address, token: nil, in: directory).expectSuccess()
    }
    try await eventually("all three nodes to become voters", seconds: 90) { [directory] in
      let peers = try Self.bao(
        ["operator", "raft", "list-peers", "-format=json"], address: first, token: root,
        in: directory)
      return peers.stdoutText.components(separatedBy: "\"voter\": true").count - 1 == 3
    }
    try Self.bao(["secrets", "enable", "-path=secret", "kv-v2"], address: first, token: root, in: directory)
      .expectSuccess()
    try await eventually("KV v2 to take writes", seconds: 60) { [directory] in
      try Self.bao(["kv", "put", "secret/ready", "value=1"], address: first, token: root, in: directory).status == 0
    }
  }

  deinit { stop() }

  /// Stops every node and removes the folder.
  public func stop() {
    for node in 0..<3 { kill(node: node) }
    try? FileManager.default.removeItem(at: directory)
  }

  /// Kills node `node` at once (SIGKILL), as a machine that loses power.
  public func kill(node: Int) {
    let process = nodes.withLock { nodes in
      defer { nodes[node] = nil }
      return nodes[node]
    }
    process?.signal(SIGKILL)
    process?.wait()
  }

  /// The nodes that follow the leader now (every node but the leader's, while one leads).
  public func standbys() throws -> [Int]? {
    try leader().map { leader in (0..<3).filter { $0 != leader } }
  }

  /// The index of the node that leads now: the one that says it is the active node. Nil while
  /// none does (a standby may still name a leader that has died).
  public func leader() throws -> Int? {
    for (index, address) in addresses.enumerated() {
      let output = try bao(["read", "-format=json", "sys/leader"], address: address)
      guard output.status == 0,
        let json = try? JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any],
        let data = json["data"] as? [String: Any] ?? json as [String: Any]?,
        data["is_self"] as? Bool == true
      else { continue }
      return index
    }
    return nil
  }

  /// Runs `bao ARGUMENTS` against the node at `address` with the root token.
  public func bao(_ arguments: [String], address: String) throws -> ProcessOutput {
    try Self.bao(arguments, address: address, token: rootToken, in: directory)
  }

  private static func bao(_ arguments: [String], address: String, token: String?, in directory: URL) throws
    -> ProcessOutput
  {
    var environment = environmentWithoutBus
    environment["HOME"] = directory.path
    environment["BAO_ADDR"] = address
    environment["BAO_TOKEN"] = token
    return try runProcess(try baoExecutable().path, arguments, environment: environment, in: directory)
  }

  private static func waitUntilAnswering(_ addresses: [String], in directory: URL) async throws {
    for address in addresses {
      // `bao status` exits 2 for a sealed server that answers, 1 when it cannot be reached.
      try await eventually("the node at \(address) to answer", seconds: 60) {
        try bao(["status"], address: address, token: nil, in: directory).status == 2
      }
    }
  }

  private static func start(node: Int, apiPort: Int, clusterPort: Int, raftTiming: RaftTiming, in directory: URL)
    throws -> ChildProcess
  {
    let folder = directory.appending(path: "node\(node)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let configuration = """
      storage "raft" {
        path = "\(folder.path)"
        node_id = "node\(node)"
        \(raftTiming == .fast ? "performance_multiplier = 1" : "")
      }
      listener "tcp" {
        address = "127.0.0.1:\(apiPort)"
        cluster_address = "127.0.0.1:\(clusterPort)"
        tls_disable = true
      }
      api_addr = "http://127.0.0.1:\(apiPort)"
      cluster_addr = "https://127.0.0.1:\(clusterPort)"
      """
    let file = directory.appending(path: "node\(node).hcl")
    try configuration.write(to: file, atomically: true, encoding: .utf8)
    let log = open(directory.appending(path: "node\(node).log").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
    defer { [log, null].forEach { close($0) } }
    var environment = environmentWithoutBus
    environment["HOME"] = directory.path
    return try ChildProcess(
      try baoExecutable(), ["server", "-config=\(file.path)"], environment: environment, stdin: null, stdout: log,
      stderr: log)
  }
}

extension ProcessOutput {
  /// Throws with the program's stderr unless it exited 0.
  public func expectSuccess() throws {
    guard status == 0 else { throw HarnessError("exit \(status): \(stderrText)") }
  }
}
