import Foundation
import Secrets
import SecretTestSupport
import Testing

@Suite("SecretKey: live changes")
struct SecretKeyLiveTests {
  @Test(arguments: Provider.all)
  func changesByAnotherProcessReachTheValue(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "live", account: "a")) var token: Token? = nil
      try instance.store("live", "a", #"{"value":"from outside","expires":9}"#)
      try await eventually("the stored value") { [shared = $token] in shared.wrappedValue == Token(value: "from outside", expires: 9) }
      _ = try instance.run("secret-tool", ["clear", "service", "live", "account", "a"])
      try await eventually("the deletion") { [shared = $token] in shared.wrappedValue == nil }
    }
  }

  @Test(arguments: Provider.all)
  func theKeysOwnWritesDoNotComeBackAsChanges(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      @Shared(.secret(service: "echo", account: "a")) var value: Int = 0
      var changes = $value.values.makeAsyncIterator()
      $value.withLock { $0 = 1 }
      try await $value.save()
      try instance.store("echo", "a", "2")
      // The stream sees the local mutation (or skips it for the latest value), then the outside
      // change; an echo of the key's own write would show 1 a second time.
      var seen: [Int] = []
      while seen.last != 2, let next = await changes.next() { seen.append(next) }
      #expect(seen.filter { $0 == 1 }.count <= 1, "\(seen)")
      #expect(seen.last == 2)
    }
  }
}

@Suite("SecretKey: in-memory storage for users' tests")
struct SecretKeyInMemoryTests {
  @Test func keysOnInMemoryStorageNeverTouchABus() async throws {
    try await SecretStorage.$current.withValue(.inMemory()) {
      try await SharedEnvironment.test().withValue {
        @Shared(.secret(service: "memory", account: "a")) var token: Token? = nil
        #expect(token == nil)
        $token.withLock { $0 = Token(value: "m", expires: 1) }
        try await $token.save()
        #expect($token.saveError == nil)
      }
    }
  }

  @Test func eachStorageStartsEmpty() async throws {
    for _ in 0..<2 {
      try await SecretStorage.$current.withValue(.inMemory()) {
        try await SharedEnvironment.test().withValue {
          @Shared(.secret(service: "memory", account: "fresh")) var value: Int = 0
          #expect(value == 0)
          $value.withLock { $0 = 5 }
          try await $value.save()
        }
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
      try await eventually("the change made after the provider came back") { [shared = $value] in shared.wrappedValue == 7 }
    }
  }
}
