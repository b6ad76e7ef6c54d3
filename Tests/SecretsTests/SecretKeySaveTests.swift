import Foundation
import SecretTestSupport
import Secrets
import Testing

@Suite("SecretKey: saving")
struct SecretKeySaveTests {
  @Test(arguments: Provider.all)
  func tenThousandMutationsInOneWindowMakeTwoWritesOnTheBus(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, clock in
      let calls = try await CallCounter(instance, members: ["CreateItem", "SetSecret"])
      @Shared(.secret(service: "batch", account: "a")) var counter: Int = 0
      for _ in 0..<10_000 { $counter.withLock { $0 += 1 } }
      // The first change is written at once; the other 9,999 wait for the window.
      try await eventually("the first change written") { try instance.lookup("batch", "a") == "1" }
      clock.advance(by: .seconds(1))
      try await eventually("the batched write") { try instance.lookup("batch", "a") == "10000" }
      #expect(try await calls.count("CreateItem") + calls.count("SetSecret") == 2)
    }
  }

  @Test(arguments: Provider.all)
  func anExplicitSaveIsReadableBySecretToolWhenItReturns(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "now", account: "a")) var token: Token? = nil
      $token.withLock { $0 = Token(value: "x", expires: 3) }
      try await $token.save()
      let stored = try #require(try instance.lookup("now", "a"))
      #expect(try JSONDecoder().decode(Token.self, from: Data(stored.utf8)) == Token(value: "x", expires: 3))
      let item = try #require(try await instance.client().search(["service": "now"]).first)
      #expect(item.label == "now (a)")
    }
  }

  /// Eight fields: were they written in the order of a hashed dictionary, all eight would come
  /// out sorted by chance once in 40,320 writes.
  struct Profile: Codable, Equatable {
    var host = "h", port = 1, user = "u", token = "t", scope = "s", region = "r", expires = 2, label = "l"
  }

  @Test(arguments: Provider.all)
  func theSameValueIsAlwaysWrittenAsTheSameBytesWithItsKeysSorted(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "sorted", account: "a")) var profile: Profile? = nil
      $profile.withLock { $0 = Profile() }
      try await $profile.save()
      #expect(
        try instance.lookup("sorted", "a")
          == #"{"expires":2,"host":"h","label":"l","port":1,"region":"r","scope":"s","token":"t","user":"u"}"#)
    }
  }

  @Test(arguments: Provider.all)
  func writingNilDeletesTheItem(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "nil", account: "a")) var token: Token? = nil
      $token.withLock { $0 = Token(value: "x", expires: 3) }
      try await $token.save()
      #expect(try instance.lookup("nil", "a") != nil)
      $token.withLock { $0 = nil }
      try await $token.save()
      #expect(try instance.lookup("nil", "a") == nil)
    }
  }

  @Test(arguments: Provider.all)
  func aFailedBatchedWriteIsTriedOnceMoreThenReported(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, clock in
      let attempts = CallCount()
      var environment = SharedEnvironment.current
      environment.secretKeyStore = environment.secretKeyStore.instrumented(owner: attempts) { item in
        item.beforeWrite = { attempts.increment() }
      }
      try await environment.withValue {
        @Shared(.secret(service: "retry", account: "a")) var value: Int = 0
        instance.stopProvider()
        $value.withLock { $0 = 1 }
        clock.advance(by: .seconds(1))
        try await eventually("the first attempt") { attempts.value == 1 }
        // The attempt counts as it starts: the retry exists once its failure is handled.
        try await eventually("the retry to be scheduled") { clock.scheduledCount == 1 }
        #expect($value.saveError == nil, "the first failure is retried, not reported")
        clock.advance(by: .seconds(1))
        try await eventually("saveError after the retry") { [shared = $value] in shared.saveError != nil }
        #expect(attempts.value == 2)
        clock.advance(by: .seconds(5))  // a third attempt, if there were one, would come now…
        #expect(value == 1, "the value is never rolled back")

        try instance.startProvider()
        $value.withLock { $0 = 2 }
        clock.advance(by: .seconds(1))
        try await eventually("the write after the provider came back") { try instance.lookup("retry", "a") == "2" }
        try await eventually("saveError cleared") { [shared = $value] in shared.saveError == nil }
        #expect(attempts.value == 3, "…and make this the fourth")
      }
    }
  }

  @Test(arguments: Provider.all)
  func theLastHandleGoingAwayFlushesThePendingWrite(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      do {
        @Shared(.secret(service: "flush", account: "a")) var value: Int = 0
        $value.withLock { $0 = 42 }
      }
      try await eventually("the flush") { try instance.lookup("flush", "a") == "42" }
    }
  }

  /// A key remembers where its item is and writes there directly; a provider that restarts may
  /// give that path to another item, which must never receive the key's value.
  @Test(arguments: Provider.all)
  func aRememberedItemIsNeverAnotherProvidersItemAtTheSamePath(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "remembered", account: "a", collection: .session)) var value: Int = 0
      $value.withLock { $0 = 1 }
      try await $value.save()
      try await $value.load()  // the read remembers the item; later writes go straight to it
      let firstPath = try #require(try await instance.client().search(["service": "remembered"]).first?.path)
      instance.stopProvider()
      try instance.startProvider()
      // The restarted provider's first item in the session collection takes the same path.
      try await instance.client().write(
        SecretValue("bystander"), attributes: ["service": "other", "account": "b"], in: .session)
      let bystander = try #require(try await instance.client().search(["service": "other"]).first)
      #expect(bystander.path == firstPath, "the scenario needs the path reused")
      $value.withLock { $0 = 2 }
      try await $value.save()
      #expect(try await instance.client().read(service: "other", account: "b", in: .session)?.text == "bystander")
      #expect(try await instance.client().read(service: "remembered", account: "a", in: .session)?.text == "2")
    }
  }

  /// The remembered item is checked before every write: one whose attributes another client
  /// changed is somebody else's item now, and keeps its secret.
  @Test(arguments: Provider.all)
  func aRememberedItemWhoseAttributesChangedIsNotWrittenTo(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "moving", account: "a", collection: .session)) var value: Int = 0
      $value.withLock { $0 = 1 }
      try await $value.save()
      try await $value.load()  // remembered from here on
      let path = try #require(try await instance.client().search(["service": "moving"]).first?.path)
      let moved = try instance.run(
        "gdbus",
        [
          "call", "--session", "--dest", instance.busName, "--object-path", path, "--method",
          "org.freedesktop.DBus.Properties.Set", "org.freedesktop.Secret.Item", "Attributes",
          "<{'service': 'moved', 'account': 'b'}>",
        ])
      try #require(moved.status == 0, "\(moved.stderrText)")
      $value.withLock { $0 = 2 }
      try await $value.save()
      #expect(try await instance.client().read(service: "moved", account: "b", in: .session)?.text == "1")
      #expect(try await instance.client().read(service: "moving", account: "a", in: .session)?.text == "2")
    }
  }
}
