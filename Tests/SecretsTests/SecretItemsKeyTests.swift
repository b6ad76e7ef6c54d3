import Foundation
import SecretTestSupport
import Secrets
import Testing

/// Advances the manual clock (closing any open refresh window) until `condition` holds.
func eventuallyRefreshed(
  _ clock: TestWriteClock, _ what: String, _ condition: @escaping @Sendable () -> Bool
) async throws {
  try await withDeadline(seconds: 20, what) {
    while !condition() {
      clock.advance(by: .seconds(1))
      try await Task.sleep(for: .milliseconds(10))
    }
  }
}

@Suite("live queries: .secretItems and .secretValues")
struct SecretItemsKeyTests {
  @Test(arguments: Provider.all)
  func theFirstValueListsTheMatchingItemsSortedByLabelWithoutSecrets(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      for (label, account) in [("b label", "bob"), ("a label", "alice")] {
        let stored = try instance.run(
          "secret-tool", ["store", "--label=\(label)", "service", "github.com", "account", account],
          input: Array("tok-\(account)".utf8))
        try #require(stored.status == 0, "\(stored.stderrText)")
      }
      try instance.store("gitlab.com", "carol", "other")
      @SharedReader(.secretItems(matching: ["service": "github.com"])) var accounts
      #expect(accounts.map(\.label) == ["a label", "b label"])
      #expect(accounts.map { $0.attributes["account"] } == ["alice", "bob"])
      let collection = try await instance.client().path(of: .default)
      #expect(accounts.allSatisfy { $0.collectionPath == collection && !$0.isLocked && $0.path.hasPrefix(collection) })
      #expect(!String(describing: accounts).contains("tok-"))
      #expect($accounts.loadError == nil)
    }
  }

  @Test(arguments: Provider.all)
  func secretToolAndASecretKeyWriteUpdateTheQueryLive(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, clock in
      @SharedReader(.secretItems(matching: ["service": "live-query"])) var items
      #expect(items.isEmpty)
      try instance.store("live-query", "outside", "1")
      try await eventuallyRefreshed(clock, "secret-tool's item listed") { [items = $items] in
        items.wrappedValue.map { $0.attributes["account"] } == ["outside"]
      }
      @Shared(.secret(service: "live-query", account: "key")) var token: Token? = nil
      $token.withLock { $0 = Token(value: "t", expires: 1) }
      try await $token.save()
      try await eventuallyRefreshed(clock, "the SecretKey's item listed") { [items = $items] in
        Set(items.wrappedValue.compactMap { $0.attributes["account"] }) == ["outside", "key"]
      }
      _ = try instance.run("secret-tool", ["clear", "service", "live-query", "account", "outside"])
      try await eventuallyRefreshed(clock, "the cleared item gone") { [items = $items] in
        items.wrappedValue.map { $0.attributes["account"] } == ["key"]
      }
    }
  }

  @Test(arguments: Provider.all)
  func oneWriteUpdatesTwoQueriesOverOneCollection(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, clock in
      @SharedReader(.secretItems(matching: ["service": "two"], in: .session)) var narrow
      @SharedReader(.secretItems(in: .session)) var everything
      let before = everything.count
      try await instance.client().write(
        SecretValue("x"), attributes: ["service": "two", "account": "a"], label: "two", in: .session)
      try await eventuallyRefreshed(clock, "both queries updated") { [narrow = $narrow, everything = $everything] in
        narrow.wrappedValue.count == 1 && everything.wrappedValue.count == before + 1
      }
      // Two declarations of one query share one value.
      @SharedReader(.secretItems(matching: ["service": "two"], in: .session)) var again
      #expect(again == narrow)
    }
  }

  /// On the live clock, as `make bench` runs it: the bound is the one the benchmark prints
  /// beside its own count (`liveQuerySearchBound`: one search per 50 ms window). One search per
  /// change would make at least 1,000, so any bound below that still tells the two apart (the
  /// last check); gnome-keyring, beside the rest of the suite on two cores, took up to 28 s for
  /// the burst, a bound of 562.
  @Test(arguments: Provider.all)
  func aBurstOf1000WritesOnTheLiveClockCostsAtMostOneSearchPerRefreshWindow(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      var environment = SharedEnvironment.test()
      environment.writeClock = .live
      environment.secretKeyStore = .secretService(instance.client())
      try await environment.withValue {
        let calls = try await CallCounter(instance, members: ["SearchItems"])
        @SharedReader(.secretItems(matching: ["service": "burst"], in: .session)) var items
        let searchesBefore = try await calls.count("SearchItems")
        let clock = ContinuousClock()
        let start = clock.now
        // Ten writers at once, so that the burst is dense even when each write is slow.
        try await withThrowingTaskGroup(of: Void.self) { group in
          for writer in 0..<10 {
            let client = instance.client()
            group.addTask {
              for index in writer * 100..<(writer + 1) * 100 {
                try await client.write(
                  SecretValue("\(index)"), attributes: ["service": "burst", "account": "\(index)"],
                  label: "b\(index)", in: .session)
              }
            }
          }
          try await group.waitForAll()
        }
        try await eventually("all 1,000 items listed", seconds: 60) { [items = $items] in
          items.wrappedValue.count == 1000
        }
        let elapsed = clock.now - start
        let searches = try await calls.count("SearchItems") - searchesBefore
        let bound = liveQuerySearchBound(elapsed: elapsed, window: .milliseconds(50))
        #expect(searches >= 1, "the burst reached the list without a search")
        #expect(searches <= bound, "\(searches) searches for 1,000 writes in \(elapsed); at most \(bound)")
        // Slower than 1,000 windows (two cores busy with the rest of the suite: 62 s in a fresh
        // machine's run, 7 s alone), the bound allows a search per write and tells nothing: the
        // test says so as a cancellation rather than pass or fail.
        if bound >= 1000 {
          try Test.cancel("the writes took \(elapsed): too slow here for the bound to tell batching from none")
        }
      }
    }
  }

  @Test(arguments: Provider.all)
  func aVanishedProviderIsALoadErrorTheListIsKeptAndItRecovers(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("vanishing-query", "a", "1")
      @SharedReader(.secretItems(matching: ["service": "vanishing-query"])) var items
      #expect(items.count == 1)
      instance.stopProvider()
      await #expect(throws: SecretError.serviceUnavailable(busName: instance.busName)) { try await $items.load() }
      #expect($items.loadError != nil)
      #expect(items.count == 1, "the last list is kept")
      try instance.startProvider()
      try await $items.load()
      #expect($items.loadError == nil)
    }
  }

  @Test(arguments: Provider.all)
  func lockedItemsAreListedAsLockedAndTheirValuesAreALoadError(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("locked-query", "a", "1")
      let client = instance.client()
      try await client.lock(.default)
      @SharedReader(.secretItems(matching: ["service": "locked-query"])) var items
      #expect(items.map(\.isLocked) == [true])
      @SharedReader(.secretValues(matching: ["service": "locked-query"], as: Int.self)) var values
      #expect(values.isEmpty)
      let path = try await client.path(of: .default)
      #expect($values.loadError as? SecretError == .locked(path: path))
    }
  }

  @Test(arguments: Provider.all)
  func lockingTheCollectionUpdatesTheListWithNoItemChange(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, clock in
      try instance.store("locking-query", "a", "1")
      @SharedReader(.secretItems(matching: ["service": "locking-query"])) var items
      #expect(items.map(\.isLocked) == [false])
      try await instance.client().lock(.default)
      try await eventuallyRefreshed(clock, "the list showing the lock") { [items = $items] in
        items.wrappedValue.map(\.isLocked) == [true]
      }
      guard provider == .secretd else { return }  // gnome-keyring would ask for a password
      try await instance.client().unlock(.default)
      try await eventuallyRefreshed(clock, "the list showing the unlock") { [items = $items] in
        items.wrappedValue.map(\.isLocked) == [false]
      }
    }
  }

  @Test(arguments: Provider.all)
  func valuesAreDecodedAndAnUndecodableItemIsReportedAlone(provider: Provider) async throws {
    try await withSecretKeys(provider) { instance, _ in
      try instance.store("values", "good", #"{"value":"v","expires":3}"#)
      try instance.store("values", "bad", "not json")
      @SharedReader(.secretValues(matching: ["service": "values"], as: Token.self)) var tokens
      let byAccount = Dictionary(uniqueKeysWithValues: tokens.map { ($0.item.attributes["account"] ?? "", $0) })
      #expect(byAccount["good"]?.value == Token(value: "v", expires: 3))
      #expect(byAccount["good"]?.decodingError == nil)
      #expect(byAccount["bad"]?.value == nil)
      let error = try #require(byAccount["bad"]?.decodingError)
      #expect(!error.description.contains("not json"))
      #expect($tokens.loadError == nil)
    }
  }

  /// OpenBao's store has no search: a query there says so rather than listing nothing.
  @Test func aQueryOverAStoreThatCannotSearchIsALoadErrorAndTheSameItemsSearchedAreListed() async throws {
    let memory = SecretKeyStore.inMemory()
    var unsearchable = SharedEnvironment.test()
    unsearchable.secretKeyStore = SecretKeyStore(owner: CallCount()) { InstrumentedItem(base: memory.item(at: $0)) }
    try await unsearchable.withValue {
      @Shared(.secret(service: "unsearched", account: "a")) var value: Int? = nil
      $value.withLock { $0 = 1 }
      try await $value.save()
      @SharedReader(.secretItems(matching: ["service": "unsearched"])) var items
      #expect(items.isEmpty)
      #expect($items.loadError as? SecretKeyError == .searchUnsupported)
    }
    var searchable = SharedEnvironment.test()
    searchable.secretKeyStore = memory
    searchable.withValue {
      @SharedReader(.secretItems(matching: ["service": "unsearched"])) var items
      #expect(items.map { $0.attributes["account"] } == ["a"])
      #expect($items.loadError == nil)
    }
  }

  @Test func inMemoryStorageUpdatesQueriesAtOnce() async throws {
    try await SharedEnvironment.test().withValue {
      @SharedReader(.secretItems(matching: ["service": "memory"])) var items
      @SharedReader(.secretValues(matching: ["service": "memory"], as: Int.self)) var values
      @Shared(.secret(service: "memory", account: "a")) var a: Int? = nil
      @Shared(.secret(service: "other", account: "b")) var b: Int? = nil
      $a.withLock { $0 = 1 }
      try await $a.save()
      $b.withLock { $0 = 2 }
      try await $b.save()
      #expect(items.map { $0.attributes["account"] } == ["a"])
      #expect(values.map(\.value) == [1])
      $a.withLock { $0 = nil }
      try await $a.save()
      #expect(items.isEmpty && values.isEmpty)
    }
  }
}
