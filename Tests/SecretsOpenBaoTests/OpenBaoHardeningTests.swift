import Foundation
import SecretTestSupport
import Secrets
import SecretsOpenBao
import Synchronization
import Testing

// Hostile and unusual servers: tokens stay with the configured servers,
// every watched key hears its own changes, a delete never removes someone else's version.
extension OpenBaoTests {
  @Suite("OpenBao store: hostile and unusual servers")
  struct HardeningTests {
    @Test func aRedirectToAServerThatIsNotConfiguredIsNotFollowed() async throws {
      try await withOpenBao { server async throws in
        try server.bao(["kv", "put", "secret/x", "value=1"]).expectSuccess()
        let elsewhere = try await Redirector(to: "http://127.0.0.1:\(try freeLoopbackPort())", in: server.directory)
        defer { elsewhere.stop() }
        let redirector = try await Redirector(to: elsewhere.address, in: server.directory)
        defer { redirector.stop() }
        let client = OpenBaoClient(server.configuration(addresses: [redirector.address]))
        #expect(throws: OpenBaoError.self) { try client.read("x") }
        #expect(elsewhere.requests() == 0, "the token went to a server nobody configured")
        // Positive control: a redirect to a configured server is followed.
        let toServer = try await Redirector(to: server.address, in: server.directory)
        defer { toServer.stop() }
        let following = OpenBaoClient(server.configuration(addresses: [toServer.address, server.address]))
        #expect(try following.read("x")?.field("value") == "1")
        #expect(toServer.requests() >= 1)
      }
    }

    @Test func everyWatchedKeyHearsItsOwnChanges() async throws {
      try await withOpenBao { server async throws in
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "many", account: "a")) var a: Int = 0
          @Shared(.secret(service: "many", account: "b")) var b: Int = 0
          @Shared(.secret(service: "many", account: "c")) var c: Int = 0
          @Shared(.secret(service: "many", account: "d")) var d: Int = 0
          let keys = [$a, $b, $c, $d]
          for key in keys {
            key.withLock { $0 = 1 }
            try await key.save()
          }
          for (index, name) in ["a", "b", "c", "d"].enumerated() {
            try server.put("many/\(name)", "\(10 + index)")
          }
          try await eventually("every key to hear its change") {
            keys.map(\.wrappedValue) == [10, 11, 12, 13]
          }
        }
      }
    }

    @Test func deletingNeverRemovesAVersionThisProcessDidNotSee() async throws {
      try await withOpenBao { server async throws in
        try await withOpenBaoKeys(server, configuration: server.configuration(pollInterval: .seconds(3600))) { _ in
          @Shared(.secret(service: "del", account: "a")) var value: Int? = nil
          $value.withLock { $0 = 1 }
          try await $value.save()
          try server.put("del/a", "2")
          $value.withLock { $0 = nil }
          await #expect(throws: OpenBaoError.self) { try await $value.save() }
          #expect(try server.value(at: "del/a") == "2", "another process's version was deleted")
        }
      }
    }

    @Test func aDeletionTimeInTheFutureIsNotADeletion() async throws {
      try await withOpenBao { server async throws in
        try server.bao(["write", "secret/config", "delete_version_after=1h"]).expectSuccess()
        try server.bao(["kv", "put", "secret/later", "value=1"]).expectSuccess()
        let client = OpenBaoClient(server.configuration())
        #expect(try client.versionState("later") == OpenBaoClient.VersionState(version: 1, isDeleted: false))
        // Positive control: deleted now is deleted.
        try server.bao(["kv", "delete", "secret/later"]).expectSuccess()
        #expect(try client.versionState("later")?.isDeleted == true)
      }
    }

    @Test func aMountThatDoesNotExistIsAnErrorNotAbsence() async throws {
      try await withOpenBao { server async throws in
        let client = OpenBaoClient(server.configuration())
        #expect(try client.read("nothing") == nil)
        #expect(throws: OpenBaoError.self) { try client.read("x", mount: "typo") }
        #expect(try server.secretctl(["read", "bao://typo/x"]).status == 3)
      }
    }

    @Test func aTokenFileIsUsedOnlyWhenItIsTheUsersOwnPrivateRegularFile() async throws {
      try await withOpenBao { server async throws in
        let folder = server.directory
        let file = folder.appending(path: "token")
        try writePrivately(server.rootToken, to: file)
        func error(reading path: String) -> String {
          let client = OpenBaoClient(server.configuration(authentication: .tokenFile(path)))
          do {
            _ = try client.read("x")
            return ""
          } catch {
            return "\(error)"
          }
        }
        // Positive control: the user's own file, mode 0600, works.
        #expect(error(reading: file.path) == "")
        let readable = folder.appending(path: "readable")
        try Data(server.rootToken.utf8).write(to: readable)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: readable.path)
        #expect(error(reading: readable.path).contains("chmod 600 \(readable.path)"))
        let link = folder.appending(path: "link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(error(reading: link.path).contains("symbolic link"))
        #expect(error(reading: folder.path).contains("not a regular file"))
        #expect(error(reading: folder.appending(path: "missing").path).contains("does not exist"))
        // Another user's file: a copy given away as root, else a file root owns.
        var foreign = "/etc/passwd"
        if geteuid() == 0 {
          let given = folder.appending(path: "given")
          try writePrivately(server.rootToken, to: given)
          try #require(chown(given.path, 65534, 65534) == 0)
          foreign = given.path
        }
        #expect(error(reading: foreign).contains("belongs to user"))
        let messages = [readable.path, link.path, foreign].map(error(reading:))
        #expect(!messages.contains { $0.contains(server.rootToken) }, "a message quotes the token")
      }
    }

    @Test func plainHTTPToAnotherMachineIsWarnedAbout() {
      let warnings = Mutex<[String]>([])
      func warned(_ address: String) -> Bool {
        warnings.withLock { $0 = [] }
        _ = OpenBaoClient(
          OpenBaoConfiguration(addresses: [URL(string: address)!], authentication: .token("t")),
          reportIssue: { message in warnings.withLock { $0.append(message) } })
        return warnings.withLock { $0.contains { $0.contains(address) && $0.contains("https://") } }
      }
      #expect(warned("http://10.0.0.7:8200"))
      #expect(warned("http://bao.example.com:8200"))
      #expect(warned("http://127.evil.example:8200"))
      #expect(!warned("https://bao.example.com:8200"))
      #expect(!warned("http://127.0.0.1:8200"))
      #expect(!warned("http://localhost:8200"))
      #expect(!warned("http://[::1]:8200"))
    }

    @Test func secretctlRefusesOptionsThatMeanNothingInOpenBao() async throws {
      try await withOpenBao { server async throws in
        #expect(try server.secretctl(["get", "--store", "bao", "--collection", "session", "s", "a"]).status == 2)
        #expect(try server.secretctl(["delete", "--store", "bao", "--all", "s"]).status == 2)
      }
    }

    @Test func runWithMaskConcealsSecretsFromBothStores() async throws {
      try await withOpenBao { server async throws in
        try await withProvider(.secretd) { instance in
          try server.bao(["kv", "put", "secret/deploy/api", "token=from-bao"]).expectSuccess()
          try await instance.client().write(SecretValue("from-keyring"), service: "db", account: "app")
          var environment = server.environment()
          environment.merge(instance.environment) { $1 }
          let run = try server.secretctl(
            [
              "run", "--mask", "-e", "DB=secret://db/app", "-e", "API=bao://secret/deploy/api#token", "--", "sh", "-c",
              "echo $DB $API",
            ],
            environment: environment)
          #expect(run.status == 0, "\(run.stderrText)")
          #expect(run.stdoutText == "<concealed> <concealed>\n")
        }
      }
    }
  }
}

/// A python HTTP server that answers every request with a 307 to `target` and counts them.
final class Redirector: Sendable {
  let address: String
  private let process: ChildProcess
  private let log: URL

  init(to target: String, in directory: URL) async throws {
    let port = try freeLoopbackPort()
    address = "http://127.0.0.1:\(port)"
    log = directory.appending(path: "redirector-\(port).log")
    guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
      throw HarnessError("cannot create \(log.path)")
    }
    let script = """
      import http.server, sys
      target, log = sys.argv[1], sys.argv[2]
      class Redirect(http.server.BaseHTTPRequestHandler):
          def answer(self):
              open(log, "a").write("request\\n")
              self.send_response(307)
              self.send_header("Location", target + self.path)
              self.send_header("Content-Length", "0")
              self.end_headers()
          do_GET = do_POST = do_PUT = do_DELETE = answer
          def log_message(self, *arguments): pass
      http.server.HTTPServer(("127.0.0.1", \(port)), Redirect).serve_forever()
      """
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    process = try ChildProcess(
      URL(filePath: "/usr/bin/python3"), ["-c", script, target, log.path], environment: environmentWithoutBus,
      stdin: null, stdout: null, stderr: null)
    try await eventually("the redirector to listen on port \(port)") { isListening(port: port) }
  }

  func requests() -> Int {
    ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").count
  }

  func stop() {
    process.signal(SIGTERM)
    process.wait()
  }
}

/// Whether something accepts TCP connections on the loopback port.
func isListening(port: Int) -> Bool {
  let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(socket) }
  var target = sockaddr_in()
  target.sin_family = sa_family_t(AF_INET)
  target.sin_addr.s_addr = inet_addr("127.0.0.1")
  target.sin_port = UInt16(port).bigEndian
  return withUnsafePointer(to: &target) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  } == 0
}
