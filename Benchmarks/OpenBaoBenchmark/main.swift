// SecretKey save() and load() over OpenBao against the same HTTP calls made by a plain client:
// python's http.client on one keep-alive connection, POSTing check-and-set writes and GETting
// the secret, as `bao kv put/get` do. Both sides talk to one `bao server -dev` on loopback, in
// alternating rounds; each round's figure is the median time of its operations. OpenBaoClient's
// own calls are timed too, to show how much of a key's time is the HTTP client (ours, over GIO).
//
// Usage: OpenBaoBenchmark [ROUNDS] [OPERATIONS]   (default: 9 rounds of 40)
import BenchmarkSupport
import Foundation
import SecretTestSupport
import Secrets
import SecretsOpenBao

struct Token: Codable, Sendable {
  var value: String
  var expires: Int
}

/// The peer: a python process that runs `put N` and `get N` commands from stdin and prints the
/// median milliseconds of each batch.
let peerScript = """
  import http.client, json, statistics, sys, time
  address, token, path = sys.argv[1:4]
  host, port = address.split("//")[1].split(":")
  connection = http.client.HTTPConnection(host, int(port))
  headers = {"X-Vault-Token": token, "Content-Type": "application/json"}
  version = 0
  def request(method, body=None):
      connection.request(method, "/v1/secret/data/" + path, body=body, headers=headers)
      answer = connection.getresponse()
      return json.loads(answer.read())
  for line in sys.stdin:
      operation, count = line.split()
      times = []
      for index in range(int(count)):
          start = time.perf_counter()
          if operation == "put":
              value = json.dumps({"value": "x" * 32, "expires": index})
              body = json.dumps({"options": {"cas": version}, "data": {"value": value}})
              version = request("POST", body)["data"]["version"]
          else:
              request("GET")["data"]["data"]["value"]
          times.append((time.perf_counter() - start) * 1000)
      print(statistics.median(times), flush=True)
  """

final class Peer {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()

  init(_ server: OpenBaoServer) throws {
    process.executableURL = URL(filePath: "/usr/bin/python3")
    process.arguments = ["-c", peerScript, server.address, server.rootToken, "bench/peer"]
    process.standardInput = input
    process.standardOutput = output
    try process.run()
  }

  /// Runs `count` operations and returns their median in milliseconds.
  func run(_ operation: String, _ count: Int) throws -> Double {
    input.fileHandleForWriting.write(Data("\(operation) \(count)\n".utf8))
    var line = Data()
    while true {
      let byte = output.fileHandleForReading.readData(ofLength: 1)
      guard let first = byte.first else { throw HarnessError("the python peer stopped") }
      if first == UInt8(ascii: "\n") { break }
      line.append(first)
    }
    guard let value = Double(String(decoding: line, as: UTF8.self)) else { throw HarnessError("bad peer output") }
    return value
  }

  deinit { process.terminate() }
}

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
}

let arguments = CommandLine.arguments.dropFirst()
let rounds = arguments.first.flatMap { Int($0) } ?? 9
let operations = arguments.dropFirst().first.flatMap { Int($0) } ?? 40

let server = try await OpenBaoServer()
defer { server.stop() }
let peer = try Peer(server)
var environment = SharedEnvironment.current
environment.secretKeyStore = .openBao(
  OpenBaoConfiguration(
    addresses: [URL(string: server.address)!], authentication: .token(server.rootToken),
    pollInterval: .seconds(3600)))
// The client alone (no persistence core), to tell the two apart.
let client = OpenBaoClient(
  OpenBaoConfiguration(addresses: [URL(string: server.address)!], authentication: .token(server.rootToken)))
let figures = try await environment.withValue {
  @Shared(.secret(service: "bench", account: "ours")) var token: Token? = nil
  let clock = ContinuousClock()
  var samples = (
    save: Samples(), load: Samples(), put: Samples(), get: Samples(), clientWrite: Samples(), clientRead: Samples()
  )
  var version = 0
  for round in 0..<rounds {
    for step in 0..<3 {
      switch (round + step) % 3 {
      case 2:
        var writes: [Double] = []
        var reads: [Double] = []
        for index in 0..<operations {
          writes.append(
            milliseconds(
              try clock.measure {
                version = try client.write(
                  "bench/client", fields: ["value": "{\"expires\":\(index)}"], checkAndSet: version)
              }))
        }
        for _ in 0..<operations {
          reads.append(milliseconds(try clock.measure { _ = try client.read("bench/client") }))
        }
        samples.clientWrite.append(Samples(writes).median)
        samples.clientRead.append(Samples(reads).median)
      case 0:
        var saves: [Double] = []
        var loads: [Double] = []
        for index in 0..<operations {
          $token.withLock { $0 = Token(value: String(repeating: "x", count: 32), expires: index) }
          saves.append(milliseconds(try await clock.measure { try await $token.save() }))
        }
        for _ in 0..<operations {
          loads.append(milliseconds(try await clock.measure { try await $token.load() }))
        }
        samples.save.append(Samples(saves).median)
        samples.load.append(Samples(loads).median)
      default:
        samples.put.append(try peer.run("put", operations))
        samples.get.append(try peer.run("get", operations))
      }
    }
  }
  return samples
}
print(
  "SecretKey over OpenBao against the same HTTP calls from python's http.client (one keep-alive connection),\n"
    + "one bao server -dev on loopback, ms per operation, medians of \(rounds) alternating rounds of \(operations):")
print("  save() vs a check-and-set POST:  SecretKey \(figures.save.formatted(3)), plain \(figures.put.formatted(3))")
print("    ratio SecretKey / plain, round by round: \(Samples.ratios(figures.save, figures.put).formatted(2))")
print("  load() vs a GET:                 SecretKey \(figures.load.formatted(3)), plain \(figures.get.formatted(3))")
print("    ratio SecretKey / plain, round by round: \(Samples.ratios(figures.load, figures.get).formatted(2))")
print(
  "  OpenBaoClient alone (no SecretKey): write \(figures.clientWrite.formatted(3)), "
    + "read \(figures.clientRead.formatted(3))")
