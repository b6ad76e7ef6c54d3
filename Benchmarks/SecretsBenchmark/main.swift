// SecretKey figures, against secretd and gnome-keyring on private buses:
// - writes reaching the provider for 10,000 mutations inside one window (the limit is 2: the
//   first change is written at once, the others together when the window closes);
// - latency of an explicit save() against one plain SecretClient write of the same bytes;
// - how long a change written by another connection takes to reach a subscribed value;
// - a live query (.secretItems): how long an outside write takes to reach its list, and how many
//   searches a burst of 1,000 writes costs.
// Latencies are medians with interquartile ranges; save() and the plain write alternate, which
// goes first rotating, and their ratio is taken pair by pair.
import BenchmarkSupport
import Foundation
import SecretTestSupport
import Secrets
import Synchronization

final class CallCount: Sendable {
  private let count = Mutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}

/// An item of another store whose writes are counted.
struct CountedItem: PersistentStore {
  let base: any PersistentStore<[UInt8]>
  let writes: CallCount

  var description: String { base.description }
  func read() throws -> [UInt8]? { try base.read() }
  func write(_ bytes: [UInt8]) throws {
    writes.increment()
    try base.write(bytes)
  }
  func delete() throws { try base.delete() }
  func keepCopy(of bytes: [UInt8], stamp: String) throws { try base.keepCopy(of: bytes, stamp: stamp) }
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? { try base.watch(onChange) }
  var readsBeforeWriting: Bool { base.readsBeforeWriting }
}

/// Wraps a store to count the writes and searches that reach it.
func counting(_ store: SecretKeyStore, writes: CallCount, searches: CallCount) -> SecretKeyStore {
  let search = store.search.map { live in
    var counted = live
    counted.search = { attributes, collection, includeSecrets in
      searches.increment()
      return try live.search(attributes, collection, includeSecrets)
    }
    return counted
  }
  return SecretKeyStore(owner: writes, search: search) { CountedItem(base: store.item(at: $0), writes: writes) }
}

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

func measure(_ provider: Provider) async throws {
  try await withProvider(provider) { instance in
    let client = instance.client()
    let writes = CallCount()
    let searches = CallCount()
    var environment = SharedEnvironment.live
    environment.secretKeyStore = counting(.secretService(client), writes: writes, searches: searches)
    try await environment.withValue {
      // 1. Batching.
      let counter = Shared<Int>(wrappedValue: 0, .secret(service: "bench", account: "batch"))
      let clock = ContinuousClock()
      let mutating = clock.measure { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } }
      while try await client.read(service: "bench", account: "batch")?.text != "10000" {
        if let error = counter.saveError { throw error }
        try await Task.sleep(for: .milliseconds(50))
      }
      print("SecretKey against \(provider):")
      print(
        String(
          format: "  10,000 mutations (%.1f ms) -> %d write(s) reached the provider", milliseconds(mutating),
          writes.value))

      // 2. Explicit save against a plain write.
      let token = Shared<String>(wrappedValue: "", .secret(service: "bench", account: "save"))
      let rounds = 200
      var times = [Samples(), Samples()]
      for round in 0..<rounds {
        token.withLock { $0 = "value \(round)" }
        for side in round.isMultiple(of: 2) ? [0, 1] : [1, 0] {
          if side == 0 {
            times[0].append(try await secondsAwaiting { try await token.save() } * 1e3)
          } else {
            times[1].append(
              try seconds {
                try client.write(SecretValue("\"value \(round)\""), service: "bench", account: "raw")
              } * 1e3)
          }
        }
      }
      print("  save(): \(times[0].formatted(2)) ms; one plain SecretClient write: \(times[1].formatted(2)) ms")
      print("  save() / plain write, pair by pair: \(Samples.ratios(times[0], times[1]).formatted(2))")

      // 3. A change from another connection reaching a subscribed value.
      let watched = Shared<Int>(wrappedValue: 0, .secret(service: "bench", account: "live"))
      let other = instance.client()
      var latencies = Samples()
      for change in 1...50 {
        var values = watched.values.makeAsyncIterator()
        latencies.append(
          try await secondsAwaiting {
            try await other.write(
              SecretValue("\(change)"), attributes: SecretClient.attributes(service: "bench", account: "live"),
              exactly: true)
            while let value = await values.next(), value != change {}
          } * 1e3)
      }
      print("  a change by another connection reaches the value in \(latencies.formatted(2)) ms")

      // 4. A live query over the session collection (default 50 ms refresh window).
      let query = SharedReader(.secretItems(matching: ["service": "bench-query"], in: .session))
      var queryLatencies = Samples()
      for change in 1...30 {
        // Past the window the last change opened: each write is a lone change.
        try await Task.sleep(for: .milliseconds(80))
        var lists = query.values.makeAsyncIterator()
        queryLatencies.append(
          try await secondsAwaiting {
            try await other.write(
              SecretValue("\(change)"), attributes: ["service": "bench-query", "account": "\(change)"], label: "q",
              in: .session)
            while let list = await lists.next(), list.count != change {}
          } * 1e3)
      }
      print("  .secretItems: a lone outside write reaches the list in \(queryLatencies.formatted(2)) ms")
      let searchesBefore = searches.value
      let burstStart = ContinuousClock.now
      let burst = try await secondsAwaiting {
        for index in 0..<1000 {
          try await other.write(
            SecretValue("b"), attributes: ["service": "bench-query", "account": "burst \(index)"], label: "q",
            in: .session)
        }
      }
      var lists = query.values.makeAsyncIterator()
      while let list = await lists.next(), list.count != 1030 {}
      // The bound SecretItemsKeyTests asserts for the same burst: one search per 50 ms window.
      let bound = liveQuerySearchBound(elapsed: ContinuousClock.now - burstStart, window: .milliseconds(50))
      print(
        String(
          format: "  .secretItems: a burst of 1,000 writes (%.2f s) cost %d searches (the window allows at most %d)",
          burst, searches.value - searchesBefore, bound))
    }
  }
}

for provider in Provider.all {
  try await measure(provider)
}
