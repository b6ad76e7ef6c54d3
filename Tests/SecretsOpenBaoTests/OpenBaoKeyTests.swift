import Foundation
import SecretTestSupport
import Secrets
import SecretsOpenBao
import Synchronization
import Testing

// `@Shared(.secret(…))` unchanged, over a real `bao server -dev`: the semantics of the Secret
// Service store, plus check-and-set.
extension OpenBaoTests {
  @Suite("SecretKey over OpenBao")
  struct OpenBaoKeyTests {
    @Test func anAbsentSecretIsTheDefaultWithNoError() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "absent", account: "a")) var token: Token? = nil
          #expect(token == nil)
          #expect($token.loadError == nil)
          // Positive control: a secret that is there is read.
          try server.put("present/a", #"{"value":"x","expires":1}"#)
          @Shared(.secret(service: "present", account: "a")) var present: Token? = nil
          #expect(present == Token(value: "x", expires: 1))
        }
      }
    }

    @Test func anExplicitSaveIsInOpenBaoWhenItReturns() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "com.example/tool", account: "api key")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "s3cret", expires: 7) }
          try await $token.save()
          let stored = try #require(try server.value(at: "com.example%2Ftool/api%20key"))
          #expect(try JSONDecoder().decode(Token.self, from: Data(stored.utf8)) == Token(value: "s3cret", expires: 7))
        }
      }
    }

    /// Every write is a version: OpenBao's keys write nothing before the window closes.
    @Test func mutationsInOneWindowMakeOneVersion() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { clock in
          @Shared(.secret(service: "batch", account: "a")) var counter: Int = 0
          for _ in 0..<1_000 { $counter.withLock { $0 += 1 } }
          #expect(try server.value(at: "batch/a") == nil)
          clock.advance(by: .seconds(1))
          try await eventually("the batched write") { try server.value(at: "batch/a") == "1000" }
          #expect(try server.version(of: "batch/a") == 1)
        }
      }
    }

    @Test func writingNilDeletesTheNewestVersionAndKeepsTheOlderOnes() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "gone", account: "a")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "x", expires: 3) }
          try await $token.save()
          $token.withLock { $0?.expires = 4 }
          try await $token.save()
          #expect(try server.value(at: "gone/a") != nil)
          $token.withLock { $0 = nil }
          try await $token.save()
          #expect(try server.value(at: "gone/a") == nil)
          let older = try server.bao(["kv", "get", "-version=1", "-field=value", "secret/gone/a"])
          #expect(older.status == 0, "version 1 should still be there")
          // Written again after the delete: check-and-set counts the deleted version.
          let deleted = try server.version(of: "gone/a")
          $token.withLock { $0 = Token(value: "y", expires: 4) }
          try await $token.save()
          #expect(try server.version(of: "gone/a") > deleted)
          let written = try server.value(at: "gone/a")
          #expect(written == #"{"expires":4,"value":"y"}"#, "\(String(describing: written))")
        }
      }
    }

    @Test func aChangeByBaoKvPutArrivesLive() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "live", account: "a")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "mine", expires: 1) }
          try await $token.save()
          try server.put("live/a", #"{"value":"theirs","expires":2}"#)
          let shared = $token
          try await eventually("the change to arrive") { shared.wrappedValue == Token(value: "theirs", expires: 2) }
          try server.bao(["kv", "delete", "secret/live/a"]).expectSuccess()
          try await eventually("the deletion to arrive") { shared.wrappedValue == nil }
        }
      }
    }

    @Test func aWriteOverAnotherProcesssChangeIsAConflictAndTheNewerValueIsLoaded() async throws {
      try await withOpenBao { server in
        // Polls too rarely to see the other process's change before the save.
        try await withOpenBaoKeys(server, configuration: server.configuration(pollInterval: .seconds(3600))) { _ in
          @Shared(.secret(service: "cas", account: "a")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "first", expires: 1) }
          try await $token.save()
          try server.put("cas/a", #"{"value":"other process","expires":2}"#)
          let theirs = try server.version(of: "cas/a")
          $token.withLock { $0 = Token(value: "mine", expires: 3) }
          await #expect(throws: OpenBaoError.self) { try await $token.save() }
          let stored = try #require(try server.value(at: "cas/a"))
          #expect(stored.contains("other process"), "the other process's version was overwritten")
          #expect(try server.version(of: "cas/a") == theirs)
          try await $token.load()
          #expect(token == Token(value: "other process", expires: 2))
          // After loading the newer value, a write goes through.
          $token.withLock { $0?.expires = 9 }
          try await $token.save()
          #expect(try server.version(of: "cas/a") > theirs)
          #expect(try server.value(at: "cas/a")?.contains(#""expires":9"#) == true)
        }
      }
    }

    @Test func aConflictFoundByABatchedWriteLoadsTheNewerValueWithoutHelp() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { clock in
          @Shared(.secret(service: "cas-batch", account: "a")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "first", expires: 1) }
          try await $token.save()
          let written = try server.version(of: "cas-batch/a")
          $token.withLock { $0 = Token(value: "pending", expires: 2) }
          try server.put("cas-batch/a", #"{"value":"other process","expires":3}"#)
          clock.advance(by: .seconds(1))
          clock.advance(by: .seconds(1))
          let shared = $token
          try await eventually("the conflict to be reported") { shared.saveError is OpenBaoError }
          try await eventually("the newer value to be loaded") {
            shared.wrappedValue == Token(value: "other process", expires: 3)
          }
          #expect(
            try server.version(of: "cas-batch/a") == written + 1, "the pending value was written over the other's")
        }
      }
    }

    @Test func aSealedServerIsAnErrorAndTheValueIsKept() async throws {
      try await withOpenBao { server in
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "sealed", account: "a")) var token: Token? = nil
          $token.withLock { $0 = Token(value: "kept", expires: 1) }
          try await $token.save()
          try server.bao(["operator", "seal"]).expectSuccess()
          $token.withLock { $0 = Token(value: "while sealed", expires: 2) }
          do {
            try await $token.save()
            Issue.record("a save to a sealed server succeeded")
          } catch {
            #expect("\(error)".contains("sealed"))
            #expect("\(error)".contains("bao operator unseal"))
            #expect(!"\(error)".contains("while sealed"), "an error quotes the secret")
          }
          await #expect(throws: OpenBaoError.self) { try await $token.load() }
          #expect(token == Token(value: "while sealed", expires: 2), "the local value was dropped")
          try server.bao(["operator", "unseal", server.unsealKey]).expectSuccess()
          #expect(try server.value(at: "sealed/a")?.contains("kept") == true)
          try await $token.save()
          #expect(try server.value(at: "sealed/a")?.contains("while sealed") == true)
        }
      }
    }

    @Test func anUnreachableServerIsAnErrorThatSaysWhereItLooked() async throws {
      let port = try freeLoopbackPort()
      let configuration = OpenBaoConfiguration(
        addresses: [URL(string: "http://127.0.0.1:\(port)")!], authentication: .token("t"),
        requestTimeout: .seconds(2))
      var environment = SharedEnvironment.test()
      environment.secretKeyStore = .openBao(configuration)
      try environment.withValue {
        @Shared(.secret(service: "nowhere", account: "a")) var token: Token? = Token(value: "default", expires: 0)
        let error = try #require($token.loadError)
        #expect("\(error)".contains("127.0.0.1:\(port)"))
        #expect("\(error)".contains("cannot be reached"))
        #expect(token == Token(value: "default", expires: 0))
      }
      // A write that no server took (connection refused) was not sent: not an unconfirmed one.
      #expect {
        try OpenBaoClient(configuration).write("nowhere", fields: ["value": "1"], checkAndSet: nil)
      } throws: { error in
        guard case OpenBaoError.unreachable = error else { return false }
        return true
      }
    }

    @Test func undecodableContentsAreAnErrorAndAreKeptBesideTheSecretBeforeTheFirstWrite() async throws {
      try await withOpenBao { server in
        try server.put("odd/a", "not json")
        try await withOpenBaoKeys(server) { _ in
          @Shared(.secret(service: "odd", account: "a")) var token: Token? = nil
          #expect($token.loadError is SecretKeyError)
          #expect(!"\($token.loadError.map { "\($0)" } ?? "")".contains("not json"))
          #expect(try server.kvList("odd") == ["a"], "a copy was made before anything was written")
          $token.withLock { $0 = Token(value: "new", expires: 1) }
          try await $token.save()
          let names = try server.kvList("odd")
          let copies = names.filter { $0.hasPrefix("a.undecodable-") }
          #expect(copies.count == 1, "\(names)")
          #expect(try copies.first.flatMap { try server.value(at: "odd/\($0)") } == "not json")
          let versions = try server.versions(of: "odd/a")
          #expect(versions.first == "not json" && versions.count == 2, "\(versions)")
        }
      }
    }

    @Test func aKeyWhoseMetadataHasNoVersionYetIsAbsentWithoutWaiting() async throws {
      try await withOpenBao { server in
        // What operators do to set max_versions before the first write.
        try server.bao(["kv", "metadata", "put", "-max-versions=5", "secret/meta/a"]).expectSuccess()
        // A load that waited for a version to appear would wait out this request timeout.
        let patient = server.configuration(requestTimeout: .seconds(600))
        try await withOpenBaoKeys(server, configuration: patient) { _ in
          let loaded = Atomic<Bool>(false)
          let declaring = Task {
            @Shared(.secret(service: "meta", account: "a")) var token: Token? = Token(value: "default", expires: 0)
            loaded.store(true, ordering: .relaxed)
            return (token, $token.loadError == nil)
          }
          try await eventually("the first load, long before the request timeout", seconds: 30) {
            loaded.load(ordering: .relaxed)
          }
          let (token, noError) = await declaring.value
          #expect(token == Token(value: "default", expires: 0))
          #expect(noError)
          // Positive control: the first write lands on top of the metadata.
          @Shared(.secret(service: "meta", account: "a")) var written: Token? = nil
          $written.withLock { $0 = Token(value: "first", expires: 1) }
          try await $written.save()
          #expect(try server.version(of: "meta/a") == 1)
        }
      }
    }

    @Test func aWriteWhoseAnswerWasLostIsUnconfirmedAndTheNextSaveRecognisesItAsItsOwn() async throws {
      try await withOpenBao { server in
        let proxy = try await WriteHoldingProxy(to: server.address, in: server.directory)
        defer { proxy.stop() }
        let configuration = server.configuration(addresses: [proxy.address], pollInterval: .seconds(3600))
        try await withOpenBaoKeys(server, configuration: configuration) { _ in
          @Shared(.secret(service: "lost", account: "a")) var counter: Int = 0
          $counter.withLock { $0 = 1 }
          try await $counter.save()
          // The same value again, as a program that retries its save does.
          $counter.withLock { $0 = 2 }
          try await loseTheAnswer(of: $counter, through: proxy)
          let afterLoss = try server.versions(of: "lost/a")
          #expect(afterLoss == ["1", "2"], "the write whose answer was lost is stored: \(afterLoss)")
          try await $counter.save()
          #expect(try server.versions(of: "lost/a") == ["1", "2"], "the retry wrote the same value again")
          // Another value on top of the version it wrote.
          $counter.withLock { $0 = 3 }
          try await loseTheAnswer(of: $counter, through: proxy)
          $counter.withLock { $0 = 4 }
          try await $counter.save()
          #expect(try server.versions(of: "lost/a") == ["1", "2", "3", "4"])
          // Positive control: a version that is not this process's own is still a conflict.
          try server.put("lost/a", "5")
          $counter.withLock { $0 = 6 }
          await #expect(throws: OpenBaoError.self) { try await $counter.save() }
        }
      }
    }

    /// Saves `shared`'s value through `proxy`, which drops the answer after OpenBao stored it:
    /// the save must say that the write is unconfirmed.
    private func loseTheAnswer(of shared: Shared<Int>, through proxy: WriteHoldingProxy) async throws {
      try proxy.hold.holdNextWrite()
      let save = Task { try await shared.save() }
      try await eventually("the write to reach OpenBao") { proxy.hold.isHolding }
      try proxy.hold.dropHeldAnswer()
      do {
        try await save.value
        Issue.record("a save whose answer never came succeeded")
      } catch let error as OpenBaoError {
        guard case .writeUnconfirmed = error else {
          Issue.record("not an unconfirmed write: \(error)")
          return
        }
        #expect("\(error)".contains("may have been stored"))
      }
      try proxy.hold.resetHold()
    }
  }
}

extension OpenBaoServer {
  /// The names `bao kv list secret/FOLDER` gives (empty when there are none).
  func kvList(_ folder: String) throws -> [String] {
    let output = try bao(["kv", "list", "-format=json", "secret/\(folder)"])
    guard output.status == 0 else { return [] }
    return (try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String]) ?? []
  }
}
