import Foundation
import SecretClient
import SecretTestSupport
import Secrets
import Synchronization
import Testing

@testable import SecretsOpenBao

// Where the token comes from, and how it is kept alive: against a real `bao server -dev`.
extension OpenBaoTests {
  @Suite("OpenBao tokens and servers")
  struct OpenBaoAuthTests {
    @Test func aTokenIsRenewedBeforeItExpiresWhileItsKeyIsInUse() async throws {
      try await withOpenBao { server in
        // Long enough that the key's first lookup, after a loaded machine's setup, still finds
        // whole seconds left to renew in; `unused`, made after it, expires after it.
        let token = try server.createToken(ttl: "8s")
        let unused = try server.createToken(ttl: "8s")
        let configuration = server.configuration(authentication: .token(token), pollInterval: .milliseconds(200))
        try await withOpenBaoKeys(server, configuration: configuration) { _ in
          @Shared(.secret(service: "renewed", account: "a")) var counter: Int = 0
          #expect($counter.loadError == nil)
          // The poller's requests keep the token in use; the same token unused expires.
          try await eventually("an unused token of the same time to live to expire", seconds: 60) {
            try server.bao(["token", "lookup", unused]).status != 0
          }
          #expect(try server.bao(["token", "lookup", token]).status == 0, "the token in use was not renewed")
          $counter.withLock { $0 = 1 }
          try await $counter.save()
          #expect(try server.value(at: "renewed/a") == "1")
        }
      }
    }

    @Test func anAppRoleLogsInAgainWhenItsTokenCanNoLongerBeRenewed() async throws {
      try await withOpenBao { server in
        let (roleID, secretID) = try server.makeAppRole(tokenTTL: "2s")
        let configuration = server.configuration(
          authentication: .appRole(roleID: roleID, secretID: .value(secretID)), pollInterval: .seconds(3600))
        try await withOpenBaoKeys(server, configuration: configuration) { _ in
          @Shared(.secret(service: "approle", account: "a")) var counter: Int = 0
          $counter.withLock { $0 = 1 }
          try await $counter.save()
          // A login made now gives a token that expires with the key's: wait until it has.
          let control = try server.appRoleLogin(roleID: roleID, secretID: secretID)
          try await eventually("a token of the role to expire", seconds: 30) {
            try server.bao(["token", "lookup", control]).status != 0
          }
          $counter.withLock { $0 = 2 }
          try await $counter.save()
          #expect(try server.value(at: "approle/a") == "2")
        }
      }
    }

    @Test func theTokenCanBeKeptInTheSecretService() async throws {
      try await withOpenBao { server in
        try await withProvider(.secretd) { instance in
          try await instance.client().write(SecretValue(server.rootToken), service: "openbao", account: "token")
          let configuration = server.configuration(
            authentication: .secretService(service: "openbao", account: "token", client: instance.client()))
          try await withOpenBaoKeys(server, configuration: configuration) { _ in
            @Shared(.secret(service: "kept", account: "a")) var counter: Int = 0
            $counter.withLock { $0 = 5 }
            try await $counter.save()
            #expect(try server.value(at: "kept/a") == "5")
          }
          // Positive control: with nothing kept there, there is no token.
          let missing = server.configuration(
            authentication: .secretService(service: "openbao", account: "nobody", client: instance.client()))
          try await withOpenBaoKeys(server, configuration: missing) { _ in
            @Shared(.secret(service: "kept", account: "a")) var counter: Int = 0
            #expect("\($counter.loadError.map { "\($0)" } ?? "")".contains("no OpenBao token"))
          }
        }
      }
    }

    @Test func aTokenFileIsReadAgainWhenItsTokenStopsWorking() async throws {
      try await withOpenBao { server in
        let file = server.directory.appending(path: "token")
        let first = try server.createToken(ttl: "1h")
        try writePrivately(first + "\n", to: file)
        let configuration = server.configuration(
          authentication: .tokenFile(file.path), pollInterval: .seconds(3600))
        try await withOpenBaoKeys(server, configuration: configuration) { _ in
          @Shared(.secret(service: "file", account: "a")) var counter: Int = 0
          $counter.withLock { $0 = 1 }
          try await $counter.save()
          // An agent rotates the token: the old one is revoked, the file holds a new one.
          try writePrivately(try server.createToken(ttl: "1h"), to: file)
          try server.bao(["token", "revoke", first]).expectSuccess()
          $counter.withLock { $0 = 2 }
          try await $counter.save()
          #expect(try server.value(at: "file/a") == "2")
        }
      }
    }

    @Test func aTokenIsRenewedAtTwoThirdsOfItsTimeToLive() async throws {
      try await withOpenBao { server in
        let token = try server.createToken(ttl: "1h", maximum: nil)
        let elapsed = Mutex(Duration.zero)
        let client = OpenBaoClient(
          server.configuration(authentication: .token(token)), now: { ContinuousClock.now + elapsed.withLock { $0 } })
        // The first request looks the token up: an hour to live, renewed after 40 minutes.
        _ = try client.read("renewal")
        elapsed.withLock { $0 = .seconds(39 * 60) }
        _ = try client.read("renewal")
        #expect(try server.lastRenewal(of: token) == nil, "renewed before two thirds of its time to live")
        elapsed.withLock { $0 = .seconds(41 * 60) }
        _ = try client.read("renewal")
        #expect(try server.lastRenewal(of: token) != nil, "not renewed after two thirds of its time to live")
      }
    }

    @Test func aForbiddenRequestIsThePolicysAndTheTokenIsReplacedOnlyOnceItNoLongerWorks() async throws {
      try await withOpenBao { server in
        let readOnly = #"path "secret/*" { capabilities = ["read"] }"#
        try server.bao(["policy", "write", "read-only", "-"], input: Array(readOnly.utf8)).expectSuccess()
        let reader = try server.createToken(ttl: "1h", policy: "read-only")
        let file = server.directory.appending(path: "token")
        try writePrivately(reader, to: file)
        let configuration = server.configuration(authentication: .tokenFile(file.path), pollInterval: .seconds(3600))
        try await withOpenBaoKeys(server, configuration: configuration) { _ in
          @Shared(.secret(service: "policy", account: "a")) var counter: Int = 0
          #expect($counter.loadError == nil)
          $counter.withLock { $0 = 1 }
          await #expect {
            try await $counter.save()
          } throws: { error in
            guard case OpenBaoError.forbidden = error else { return false }
            return "\(error)".contains("policy") && "\(error)".contains("secret/data/policy/a")
          }
          // A token with the right policy in the file is not read while the refused one works.
          try writePrivately(try server.createToken(ttl: "1h"), to: file)
          await #expect(throws: OpenBaoError.self) { try await $counter.save() }
          #expect(try server.value(at: "policy/a") == nil)
          // Once it no longer works, the file is read again.
          try server.bao(["token", "revoke", reader]).expectSuccess()
          try await $counter.save()
          #expect(try server.value(at: "policy/a") == "1")
        }
      }
    }

    @Test func aFailedLoginSaysWhatToCheckForWhereTheTokenCameFrom() async throws {
      try await withOpenBao { server in
        let (roleID, _) = try server.makeAppRole(tokenTTL: "1h")
        let wrongSecretID = server.configuration(
          authentication: .appRole(roleID: roleID, secretID: .value("not-the-secret-id")))
        let appRole = try loadError(server, wrongSecretID)
        #expect(appRole.contains("AppRole login") && appRole.contains("role id") && appRole.contains("secret id"))
        #expect(!appRole.contains("not-the-secret-id"), "the message quotes the secret id")
        #expect(!appRole.contains("policy"), "\(appRole)")

        let revoked = try server.createToken(ttl: "1h")
        try server.bao(["token", "revoke", revoked]).expectSuccess()
        let file = server.directory.appending(path: "revoked-token")
        try writePrivately(revoked, to: file)
        let fromFile = try loadError(server, server.configuration(authentication: .tokenFile(file.path)))
        #expect(fromFile.contains("the token in \(file.path)") && fromFile.contains("OpenBao agent"), "\(fromFile)")

        try await withProvider(.secretd) { instance in
          try await instance.client().write(SecretValue(revoked), service: "openbao", account: "token")
          let kept = try loadError(
            server,
            server.configuration(
              authentication: .secretService(service: "openbao", account: "token", client: instance.client())))
          #expect(kept.contains("Secret Service") && kept.contains("secretctl set openbao token"), "\(kept)")
        }
        #expect(![appRole, fromFile].contains { $0.contains(revoked) }, "a message quotes the token")
      }
    }

    /// The load error of a key on `server` with `configuration`, as text.
    private func loadError(_ server: OpenBaoServer, _ configuration: OpenBaoConfiguration) throws -> String {
      var environment = SharedEnvironment.test()
      environment.secretKeyStore = .openBao(configuration)
      return try environment.withValue {
        @Shared(.secret(service: "login", account: "a")) var counter: Int = 0
        let error = try #require($counter.loadError as? OpenBaoError)
        guard case .loginFailed = error else {
          Issue.record("not a failed login: \(error)")
          return ""
        }
        return "\(error)"
      }
    }

    @Test func aServerThatIsDownIsSkippedForTheNextOne() async throws {
      try await withOpenBao { server in
        let down = "http://127.0.0.1:\(try freeLoopbackPort())"
        let configuration = server.configuration(addresses: [down, server.address])
        try await withOpenBaoKeys(server, configuration: configuration) { _ in
          @Shared(.secret(service: "failover", account: "a")) var counter: Int = 0
          #expect($counter.loadError == nil)
          $counter.withLock { $0 = 3 }
          try await $counter.save()
          #expect(try server.value(at: "failover/a") == "3")
        }
      }
    }
  }
}

/// Writes `text` to a file only its owner may read, as a token file must be.
func writePrivately(_ text: String, to file: URL) throws {
  try Data(text.utf8).write(to: file)
  try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
}

extension OpenBaoServer {
  /// A renewable child token of the root token with time to live `ttl` (at most `maximum`) and
  /// the root's policies unless one is given.
  func createToken(ttl: String, maximum: String? = "10m", policy: String? = nil) throws -> String {
    let output = try bao(
      ["token", "create", "-ttl=\(ttl)", "-field=token"] + (maximum.map { ["-explicit-max-ttl=\($0)"] } ?? [])
        + (policy.map { ["-policy=\($0)"] } ?? []))
    guard output.status == 0 else { throw HarnessError("bao token create failed: \(output.stderrText)") }
    return output.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// When `token` was last renewed; nil when never.
  func lastRenewal(of token: String) throws -> Int? {
    let output = try bao(["token", "lookup", "-format=json", token])
    try output.expectSuccess()
    let json = try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any]
    return ((json?["data"] as? [String: Any])?["last_renewal_time"] as? Int).flatMap { $0 > 0 ? $0 : nil }
  }

  /// An AppRole whose tokens may use `secret/` and live `tokenTTL` at most (so they cannot be
  /// renewed): its role id and a secret id.
  func makeAppRole(tokenTTL: String) throws -> (roleID: String, secretID: String) {
    let policy = #"path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }"#
    try bao(["auth", "enable", "approle"]).expectSuccess()
    try bao(["policy", "write", "kv", "-"], input: Array(policy.utf8)).expectSuccess()
    try bao([
      "write", "auth/approle/role/app", "token_policies=kv", "token_ttl=\(tokenTTL)", "token_max_ttl=\(tokenTTL)",
    ]).expectSuccess()
    let roleID = try bao(["read", "-field=role_id", "auth/approle/role/app/role-id"])
    let secretID = try bao(["write", "-f", "-field=secret_id", "auth/approle/role/app/secret-id"])
    try roleID.expectSuccess()
    try secretID.expectSuccess()
    return (roleID.stdoutText.trimmed, secretID.stdoutText.trimmed)
  }

  /// A token from logging in as the role now.
  func appRoleLogin(roleID: String, secretID: String) throws -> String {
    let output = try bao([
      "write", "-field=token", "auth/approle/login", "role_id=\(roleID)", "secret_id=\(secretID)",
    ])
    try output.expectSuccess()
    return output.stdoutText.trimmed
  }
}

extension String {
  var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
