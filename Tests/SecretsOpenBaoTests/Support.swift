import Foundation
import SecretTestSupport
import Secrets
import SecretsOpenBao
import Testing

/// Every OpenBao suite, one test at a time: servers bind loopback ports, and each is a few hundred
/// megabytes of Go.
@Suite(.serialized) struct OpenBaoTests {}

struct Token: Codable, Sendable, Equatable {
  var value: String
  var expires: Int
}

extension OpenBaoServer {
  /// A configuration for this server: the root token unless given, a fast poll.
  func configuration(
    authentication: OpenBaoAuthentication? = nil, addresses: [String]? = nil,
    pollInterval: Duration = .milliseconds(50),
    requestTimeout: Duration = .seconds(5)
  ) -> OpenBaoConfiguration {
    OpenBaoConfiguration(
      addresses: (addresses ?? [address]).compactMap { URL(string: $0) },
      authentication: authentication ?? .token(rootToken), pollInterval: pollInterval, requestTimeout: requestTimeout)
  }

  /// The value of each version of `secret/PATH`, oldest first (nil for a deleted one).
  func versions(of path: String) throws -> [String?] {
    let newest = try version(of: path)
    guard newest > 0 else { return [] }
    return try (1...newest).map { version in
      let output = try bao(["kv", "get", "-version=\(version)", "-field=value", "secret/\(path)"])
      return output.status == 0 ? output.stdoutText : nil
    }
  }

  /// The JSON text in field `value` of `secret/PATH`, or nil when `bao kv get` finds nothing.
  func value(at path: String) throws -> String? {
    let output = try bao(["kv", "get", "-field=value", "secret/\(path)"])
    return output.status == 0 ? output.stdoutText : nil
  }

  /// The newest version number of `secret/PATH` (0 when there is none).
  func version(of path: String) throws -> Int {
    let output = try bao(["kv", "metadata", "get", "-format=json", "secret/\(path)"])
    guard output.status == 0,
      let json = try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any],
      let data = json["data"] as? [String: Any]
    else { return 0 }
    return data["current_version"] as? Int ?? 0
  }

  /// `bao kv put secret/PATH value=TEXT`, by another process.
  func put(_ path: String, _ text: String) throws {
    let output = try bao(["kv", "put", "secret/\(path)", "value=-"], input: Array(text.utf8))
    guard output.status == 0 else { throw HarnessError("bao kv put failed: \(output.stderrText)") }
  }
}

/// Runs `body` with every new `SecretKey` on `server`'s KV store and a manual write clock.
func withOpenBaoKeys<T: Sendable>(
  _ server: OpenBaoServer, configuration: OpenBaoConfiguration? = nil,
  _ body: (TestWriteClock) async throws -> T
) async throws -> T {
  let clock = TestWriteClock()
  var environment = SharedEnvironment.test(clock: clock)
  environment.secretKeyStore = .openBao(configuration ?? server.configuration())
  return try await environment.withValue { try await body(clock) }
}
