import Foundation
import SecretTestSupport
import Secrets
import Synchronization
import Testing

@Suite("SecretKey: live changes")
struct SecretKeyLiveTests {
  @Test(arguments: Provider.all)
  func changesByAnotherProcessReachTheValue(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "live", account: "a")) var token: Token? = nil
      try instance.store("live", "a", #"{"value":"from outside","expires":9}"#)
      try await eventually("the stored value") { [shared = $token] in
        shared.wrappedValue == Token(value: "from outside", expires: 9)
      }
      _ = try instance.run("secret-tool", ["clear", "service", "live", "account", "a"])
      try await eventually("the deletion") { [shared = $token] in shared.wrappedValue == nil }
    }
  }

  @Test(arguments: Provider.all)
  func theKeysOwnWriteReadBackIsNotANewValue(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      // The provider's notices are delivered by the test, so the echo of the key's own write is
      // read back before anything else changes the item, every time.
      let notices = ManualChangeNotices()
      var environment = SharedEnvironment.current
      environment.secretKeyStore = notices.store(over: .secretService(instance.client()))
      try await environment.withValue {
        @Shared(.secret(service: "echo", account: "a")) var value: Int = 0
        let seen = Mutex<[Int]>([])
        let consumer = Task { [values = $value.values] in
          for await value in values { seen.withLock { $0.append(value) } }
        }
        defer { consumer.cancel() }
        try await eventually("the first value") { seen.withLock { $0 } == [0] }
        $value.withLock { $0 = 1 }
        try await $value.save()
        let readsBefore = notices.reads
        notices.deliver()
        try await eventually("the read of the key's own write") { notices.reads > readsBefore }
        try instance.store("echo", "a", "2")
        notices.deliver()
        try await eventually("the outside change") { seen.withLock { $0.last } == 2 }
        #expect(seen.withLock { $0 } == [0, 1, 2], "an echo shows 1 twice")
      }
    }
  }
}

/// The provider's items, with change notices delivered when a test says so and reads counted.
final class ManualChangeNotices: Sendable {
  private let onChange = Mutex<(@Sendable () -> Void)?>(nil)
  private let readCount = CallCount()

  var reads: Int { readCount.value }

  func store(over provider: SecretKeyStore) -> SecretKeyStore {
    provider.instrumented(owner: self) { [self] item in
      item.afterRead = { [readCount] in readCount.increment() }
      item.replacedWatch = { [self] notify in
        onChange.withLock { $0 = notify }
        return SharedSubscription {}
      }
    }
  }

  /// What the provider's change signal does: tells the key that its item may have changed.
  func deliver() {
    onChange.withLock { $0 }?()
  }
}

@Suite("SecretKey: in-memory storage for users' tests")
struct SecretKeyInMemoryTests {
  @Test func valuesOnInMemoryStorageAreStoredAndReadBack() async throws {
    try await SharedEnvironment.test().withValue {
      @Shared(.secret(service: "memory", account: "a")) var token: Token? = nil
      #expect(token == nil)
      $token.withLock { $0 = Token(value: "m", expires: 1) }
      try await $token.save()
      #expect($token.saveError == nil)
      let store = SharedEnvironment.current.secretKeyStore
      let stored = try store.item(at: SecretItemAddress(service: "memory", account: "a")).read()
      #expect(stored.map { String(decoding: $0, as: UTF8.self) }?.contains("\"value\":\"m\"") == true)
    }
  }

  @Test func eachStorageStartsEmpty() async throws {
    for _ in 0..<2 {
      try await SharedEnvironment.test().withValue {
        @Shared(.secret(service: "memory", account: "fresh")) var value: Int = 0
        #expect(value == 0)
        $value.withLock { $0 = 5 }
        try await $value.save()
      }
    }
  }
}

@Suite("SecretKey: live changes after an outage")
struct SecretKeyOutageTests {
  @Test(arguments: Provider.all)
  func liveChangesResumeOnceTheProviderIsBack(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      instance.stopProvider()
      @Shared(.secret(service: "outage", account: "a")) var value: Int = 0
      #expect($value.loadError != nil)
      try instance.startProvider()
      try await $value.load()
      #expect($value.loadError == nil)
      try instance.store("outage", "a", "7")
      try await eventually("the change made after the provider came back") { [shared = $value] in
        shared.wrappedValue == 7
      }
    }
  }
}
