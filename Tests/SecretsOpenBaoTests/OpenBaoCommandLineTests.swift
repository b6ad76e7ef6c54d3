import Foundation
import SecretClient
import SecretTestSupport
import Secrets
import SecretsOpenBao
import Testing

// secretctl's bao:// references and --store bao, as a user runs them: the built binaries,
// against a real `bao server -dev`.
extension OpenBaoTests {
  @Suite("secretctl over OpenBao")
  struct CommandLineTests {
    @Test func readPrintsAFieldAndExitsOneWhenThereIsNone() async throws {
      try await withOpenBao { server in
        try server.bao(["kv", "put", "secret/deploy/api", "token=t0k3n", "value=v"]).expectSuccess()
        let field = try server.secretctl(["read", "bao://secret/deploy/api#token"])
        #expect(field.status == 0)
        #expect(field.stdoutText == "t0k3n")
        #expect(try server.secretctl(["read", "bao://secret/deploy/api"]).stdoutText == "v")
        let missing = try server.secretctl(["read", "bao://secret/deploy/none#token"])
        #expect(missing.status == 1)
        #expect(missing.stderrText.contains("bao://secret/deploy/none#token"))
        #expect(try server.secretctl(["read", "bao://secret"]).status == 2)
      }
    }

    @Test func runAndInjectResolveBaoAndSecretServiceReferencesTogether() async throws {
      try await withOpenBao { server in
        try await withProvider(.secretd) { instance in
          try server.bao(["kv", "put", "secret/deploy/api", "token=from-bao"]).expectSuccess()
          try await instance.client().write(SecretValue("from-keyring"), service: "db", account: "app")
          var environment = server.environment()
          environment.merge(instance.environment) { $1 }
          let template = "a={{ bao://secret/deploy/api#token }} b={{ secret://db/app }}\n"
          // The template comes on stdin, which secretctl has read before it hands the command over.
          let inject = try server.secretctl(["inject"], input: Array(template.utf8), environment: environment)
          #expect(inject.status == 0, "\(inject.stderrText)")
          #expect(inject.stdoutText == "a=from-bao b=from-keyring\n")
          let run = try server.secretctl(
            [
              "run", "-e", "API=bao://secret/deploy/api#token", "-e", "DB=secret://db/app", "--", "sh", "-c",
              "echo $API $DB",
            ],
            environment: environment)
          #expect(run.stdoutText == "from-bao from-keyring\n")
        }
      }
    }

    @Test func setGetAndDeleteWithStoreBaoShareTheSecretAKeyKeeps() async throws {
      try await withOpenBao { server in
        let set = try server.secretctl(["set", "--store", "bao", "--trim", "cli", "me"], input: Array("s3cret\n".utf8))
        #expect(set.status == 0, "\(set.stderrText)")
        #expect(try server.value(at: "cli/me") == "s3cret")
        #expect(try server.secretctl(["get", "--store", "bao", "cli", "me"]).stdoutText == "s3cret")
        // What a SecretKey keeps, secretctl reads.
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "key", account: "me")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "k", expires: 1) }
          try await $token.save()
        }
        let json = try server.secretctl(["get", "--store", "bao", "key", "me"]).stdoutText
        #expect(try JSONDecoder().decode(Token.self, from: Data(json.utf8)) == Token(value: "k", expires: 1))
        #expect(try server.secretctl(["delete", "--store", "bao", "cli", "me"]).status == 0)
        #expect(try server.secretctl(["get", "--store", "bao", "cli", "me"]).status == 1)
        #expect(try server.secretctl(["delete", "--store", "bao", "cli", "me"]).status == 1)
      }
    }

    @Test func theTokenMayComeFromTheSecretService() async throws {
      try await withOpenBao { server in
        try await withProvider(.secretd) { instance in
          try server.bao(["kv", "put", "secret/deploy/api", "token=t"]).expectSuccess()
          var environment = server.environment()
          environment["BAO_TOKEN"] = nil
          environment.merge(instance.environment) { $1 }
          let before = try server.secretctl(["read", "bao://secret/deploy/api#token"], environment: environment)
          #expect(before.status == 3)
          #expect(before.stderrText.contains("no OpenBao token"))
          let kept = try server.secretctl(
            ["set", "openbao", "token"], input: Array(server.rootToken.utf8), environment: environment)
          try kept.expectSuccess()
          let after = try server.secretctl(["read", "bao://secret/deploy/api#token"], environment: environment)
          #expect(after.stdoutText == "t", "\(after.stderrText)")
        }
      }
    }

    @Test func anUnreachableServerIsExitStatusThreeSayingWhere() async throws {
      let port = try freeLoopbackPort()
      var environment = environmentWithoutBus
      environment["BAO_ADDR"] = "http://127.0.0.1:\(port)"
      environment["BAO_TOKEN"] = "t"
      let output = try runProcess(
        try builtExecutable("secretctl").path, ["read", "bao://secret/x"], environment: environment,
        in: FileManager.default.temporaryDirectory)
      #expect(output.status == 3)
      #expect(output.stderrText.contains("127.0.0.1:\(port)"))
    }

    @Test func openBaoIsReachedThroughGIOWithoutLibcurl() throws {
      for program in ["secretctl", "secretctl-bao"] {
        let libraries = try runProcess(
          "ldd", [try builtExecutable(program).path], environment: environmentWithoutBus,
          in: FileManager.default.temporaryDirectory)
        #expect(libraries.stdoutText.contains("libgio-2.0"), "the control: \(program) links GIO")
        #expect(!libraries.stdoutText.contains("libcurl"), "\(program) loads libcurl")
      }
    }
  }
}

extension OpenBaoServer {
  /// Runs the built secretctl against this server (its address and root token unless given).
  func secretctl(_ arguments: [String], input: [UInt8]? = nil, environment: [String: String]? = nil) throws
    -> ProcessOutput
  {
    try runProcess(
      try builtExecutable("secretctl").path, arguments, input: input, environment: environment ?? self.environment(),
      in: directory)
  }
}

extension OpenBaoTests {
  @Suite("The README's OpenBao example")
  struct ExampleTests {
    @Test func theExampleRotatesItsKeyInOpenBaoRunAfterRun() async throws {
      try await withOpenBao { server in
        let example = try builtExecutable("openbao-example").path
        let first = try runProcess(example, [], environment: server.environment(), in: server.directory)
        #expect(first.status == 0, "\(first.stderrText)")
        #expect(first.stdoutText == "deploy key rotated 1 time(s)\n")
        let second = try runProcess(example, [], environment: server.environment(), in: server.directory)
        #expect(second.stdoutText == "deploy key rotated 2 time(s)\n")
        #expect(try server.version(of: "com.example.fleet/deploy") == 2)
        let sealed = try server.bao(["operator", "seal"])
        try sealed.expectSuccess()
        let failing = try runProcess(example, [], environment: server.environment(), in: server.directory)
        #expect(failing.status != 0)
        #expect(failing.stderrText.contains("sealed"))
      }
    }
  }
}
