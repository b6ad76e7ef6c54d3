// Benchmark: secretd against gnome-keyring, driven by the same libsecret C calls
// (secret_service_store_sync / secret_service_lookup_sync / secret_service_clear_sync) on a
// SecretService opened on each provider's private bus. Like for like: secretd keeps everything in
// memory, so its peer is gnome-keyring's `session` collection, also in memory; gnome-keyring's
// `default` collection (the login keyring, rewritten on disk at every store) is printed beside it
// for stores and lookups, labelled as disk.
//
// When SECRETD_BASELINE names the secretd of an earlier build (`make bench` builds the one before
// the store moved into an arena), it runs as another side, so what the arena costs is measured
// like for like.
//
// Each provider is filled to the stated number of items first; then, in rounds whose order
// rotates, each stores (replacing items it has, so the count stays put), looks items up, and
// creates items beyond the fill level and deletes them again. Figures are medians of the rounds
// with their interquartile ranges; ratios are taken round by round. Also printed: where each
// lookup's time goes (the daemon's CPU, the client's CPU, the rest: the bus daemon and
// wake-ups), each call's daemon CPU, and each daemon's memory.
import BenchmarkSupport
import Foundation
import ProviderBenchmarkSupport
import SecretTestSupport

let sizes = [300, 1300]
let rounds = 11
let storesPerRound = 40
let lookupsPerRound = 300
let createsPerRound = 40

print("secretd vs gnome-keyring: libsecret secret_service_store_sync / lookup_sync / clear_sync, one client;")
print("stores replace items (the count stays at the fill level); creates add items beyond it, which deletes")
print("(clear: a search, then Delete) remove again; \(rounds) rounds of \(storesPerRound) stores,")
print("\(lookupsPerRound) lookups, \(createsPerRound) creates and \(createsPerRound) deletes per side, order rotating;")
print("medians with interquartile ranges")

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
              try Subject("gnome-keyring login (disk)", keyringLogin, collection: "default", inMemory: false),
            ] + (try earlier.map { [try Subject(baselineName, $0, collection: "default")] } ?? [])
          let inMemory = subjects.filter(\.inMemory)
          for size in sizes {
            for subject in subjects { try subject.fill(to: size) }
            try alternating(rounds: rounds, sides: subjects.count) { round, side in
              try subjects[side].measureReplaces(size, count: storesPerRound, round: round)
            }
            try alternating(rounds: rounds, sides: subjects.count) { round, side in
              try subjects[side].measureLookups(size, count: lookupsPerRound, round: round)
            }
            try alternating(rounds: rounds, sides: inMemory.count) { _, side in
              try inMemory[side].measureCreatesAndDeletes(size, count: createsPerRound)
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
