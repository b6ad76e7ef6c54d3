// Benchmark: secretd against gnome-keyring, driven by the same libsecret C calls
// (secret_service_store_sync / secret_service_lookup_sync) on a SecretService opened on each
// provider's private bus. Like for like: secretd keeps everything in memory, so its peer is
// gnome-keyring's `session` collection, also in memory; gnome-keyring's `default` collection (the
// login keyring, rewritten on disk at every store) is printed beside it, labelled as disk.
//
// When SECRETD_BASELINE names the secretd of an earlier build (`make bench` builds the one before
// the store moved into an arena), it runs as a fourth side, so what the arena costs is measured
// like for like.
//
// Each provider is filled to the stated number of items first; then, in rounds whose order
// rotates, each stores (replacing items it has, so the count stays put) and looks items up.
// Figures are medians of the rounds with their interquartile ranges; ratios are taken round by
// round. Also printed: where each lookup's time goes (the daemon's CPU, the client's CPU, the
// rest: the bus daemon and wake-ups) and each daemon's memory.
import BenchmarkSupport
import Foundation
import ProviderBenchmarkSupport
import SecretTestSupport

/// One provider and collection under test: its libsecret client and its figures per fill level.
final class Subject {
  let name: String
  let collection: String
  let instance: ProviderInstance
  let service: LibSecretService
  var stored = 0
  var storeRates: [Int: Samples] = [:]
  var lookupRates: [Int: Samples] = [:]
  /// CPU seconds per lookup, of the daemon and of this process (the libsecret client).
  var lookupCPU: [Int: (daemon: Samples, client: Samples)] = [:]
  /// The daemon's CPU seconds per store.
  var storeCPU: [Int: Samples] = [:]
  var memory: ResidentMemory?

  init(_ name: String, _ instance: ProviderInstance, collection: String) throws {
    self.name = name
    self.collection = collection
    self.instance = instance
    service = try LibSecretService(address: instance.busAddress, busName: instance.busName)
  }

  /// Adds items until there are `size`.
  func fill(to size: Int) throws {
    while stored < size {
      try service.store(stored, in: collection)
      stored += 1
    }
  }

  /// Replaces `count` of the items there are, spread over all of them.
  func measureStores(_ size: Int, count: Int, round: Int) throws {
    let daemon = cpuSeconds(instance.pid)
    let wall = try seconds {
      for step in 0..<count { try service.store(spread(round, step, count, size), in: collection) }
    }
    storeRates[size, default: Samples()].append(Double(count) / wall)
    storeCPU[size, default: Samples()].append((cpuSeconds(instance.pid) - daemon) / Double(count))
  }

  func measureLookups(_ size: Int, count: Int, round: Int) throws {
    let (daemon, client) = (cpuSeconds(instance.pid), ownCPUSeconds())
    let wall = try seconds { for step in 0..<count { try service.lookup(spread(round, step, count, size)) } }
    lookupRates[size, default: Samples()].append(Double(count) / wall)
    var cpu = lookupCPU[size] ?? (Samples(), Samples())
    cpu.daemon.append((cpuSeconds(instance.pid) - daemon) / Double(count))
    cpu.client.append((ownCPUSeconds() - client) / Double(count))
    lookupCPU[size] = cpu
  }

  /// Item indexes that visit the whole collection, in an order that differs from round to round.
  private func spread(_ round: Int, _ step: Int, _ count: Int, _ size: Int) -> Int {
    ((round * count + step) * 7919) % size
  }
}

let sizes = [300, 1300]
let rounds = 11
let storesPerRound = 40
let lookupsPerRound = 300

print("secretd vs gnome-keyring: libsecret secret_service_store_sync / secret_service_lookup_sync, one client;")
print("stores replace items (the count stays at the fill level); \(rounds) rounds of \(storesPerRound) stores and")
print("\(lookupsPerRound) lookups per side, order rotating; medians with interquartile ranges")

/// The earlier secretd to compare with, and what it is called in the tables.
let baseline = ProcessInfo.processInfo.environment["SECRETD_BASELINE"].map { URL(filePath: $0) }
let baselineName = "secretd \(ProcessInfo.processInfo.environment["SECRETD_BASELINE_NAME"] ?? "baseline") (memory)"

/// Runs `body` with the baseline secretd up, or with nil when none was given.
func withBaseline(_ body: (ProviderInstance?) async throws -> Void) async throws {
  guard let baseline else {
    print("(no earlier secretd to compare with: SECRETD_BASELINE is not set)")
    return try await body(nil)
  }
  try await withProvider(.secretd, secretd: baseline) { try await body($0) }
}

/// The sides, each provider on a bus of its own, all up at once.
func compare() async throws {
  try await withProvider(.secretd) { secretd in
    try await withProvider(.gnomeKeyring) { keyringSession in
      try await withProvider(.gnomeKeyring) { keyringLogin in
        try await withBaseline { earlier in
          let subjects =
            [
              try Subject("secretd (memory)", secretd, collection: "default"),
              try Subject("gnome-keyring session (memory)", keyringSession, collection: "session"),
              try Subject("gnome-keyring login (disk)", keyringLogin, collection: "default"),
            ] + (try earlier.map { [try Subject(baselineName, $0, collection: "default")] } ?? [])
          for size in sizes {
            for subject in subjects { try subject.fill(to: size) }
            try alternating(rounds: rounds, sides: subjects.count) { round, side in
              try subjects[side].measureStores(size, count: storesPerRound, round: round)
            }
            try alternating(rounds: rounds, sides: subjects.count) { round, side in
              try subjects[side].measureLookups(size, count: lookupsPerRound, round: round)
            }
          }
          for subject in subjects { subject.memory = ResidentMemory(of: subject.instance.pid) }
          report(subjects)
        }
      }
    }
  }
}

try await compare()

/// The tables (rates, and secretd's advantage round by round), the time per lookup, memory.
func report(_ subjects: [Subject]) {
  let secretd = subjects[0]
  for size in sizes {
    print("")
    print("At \(size) items:")
    print("| | stores/s | secretd is × faster | lookups/s | secretd is × faster |")
    print("|---|---|---|---|---|")
    for subject in subjects {
      let stores = subject.storeRates[size] ?? Samples()
      let lookups = subject.lookupRates[size] ?? Samples()
      let isSecretd = subject === secretd
      let storeRatio = isSecretd ? "" : Samples.ratios(secretd.storeRates[size] ?? Samples(), stores).formatted(2)
      let lookupRatio = isSecretd ? "" : Samples.ratios(secretd.lookupRates[size] ?? Samples(), lookups).formatted(2)
      print("| \(subject.name) | \(stores) | \(storeRatio) | \(lookups) | \(lookupRatio) |")
    }
    for subject in subjects {
      let wall = 1e6 / max((subject.lookupRates[size] ?? Samples()).median, 1)
      let daemon = (subject.lookupCPU[size]?.daemon.median ?? 0) * 1e6
      let client = (subject.lookupCPU[size]?.client.median ?? 0) * 1e6
      print(
        "  \(subject.name): a lookup takes \(Int(wall)) µs = daemon CPU \(Int(daemon)) + client CPU \(Int(client)) "
          + "+ rest \(Int(max(0, wall - daemon - client))) (bus daemon, wake-ups); "
          + "a store takes \(Int((subject.storeCPU[size]?.median ?? 0) * 1e6)) µs of daemon CPU")
    }
  }
  print("")
  for subject in subjects {
    print("memory after \(sizes.last ?? 0) items: \(subject.name) \(subject.memory.map { "\($0)" } ?? "?")")
  }
  let flatStore = (secretd.storeRates[1300]?.median ?? 0) / max(secretd.storeRates[300]?.median ?? 1, 1)
  let flatLookup = (secretd.lookupRates[1300]?.median ?? 0) / max(secretd.lookupRates[300]?.median ?? 1, 1)
  print(
    String(format: "secretd flatness (rate at 1,300 / rate at 300): stores %.2f, lookups %.2f", flatStore, flatLookup))
}
