// Benchmark: secretd's persistent collection (`secretd --persistent`: `login`, the `default`
// alias, each item sealed into a record log in the data folder, synced before the reply) against
// gnome-keyring's login keyring (at every change the whole file written to a temporary one,
// fsynced and renamed into place), through the same libsecret calls as SecretdBenchmark (store,
// lookup, clear), each provider on a private bus with a HOME and XDG_DATA_HOME of its own:
// - durable stores (replacing items), creates, deletes and lookups at 300 and 1,300 items; beside
//   them the same calls on `session` (memory only) of another secretd --persistent with `login`
//   unlocked too, so that lookups in `login` and in `session` differ only in the collection;
// - unlocking `login` with 10,000 items, beyond the KDF: UnlockWithPassphrase on a secretd whose
//   `login` holds them and on one whose `login` is empty, each just restarted (so locked, its log
//   opened and checked at start), round by round; both pay the same Argon2id (secretd's standard
//   cost; it has no cheaper setting), so the difference is what the items cost, the one change of
//   `Items` announced before the reply included;
// - bytes on disk per item: the files of secretd's data folder as a fill of creates passes 300,
//   1,300 and 10,000 items, and after the rounds at 1,300 (superseded records included until an
//   unlock compacts the log); gnome-keyring's keyrings folder right after its fills to 300 and 1,300.
// Rounds rotate the order of the sides, each side's writes start after a sync(); figures are
// medians with interquartile ranges, ratios and differences taken round by round.
import BenchmarkSupport
import Foundation
import ProviderBenchmarkSupport
import SecretTestSupport

let sizes = [300, 1300]
let rounds = 11
let storesPerRound = 40
let lookupsPerRound = 300
let createsPerRound = 20
let unlockedItems = 10_000
let passphrase = "benchmark passphrase"

print("secretd --persistent (login, sealed on disk, synced per change) vs gnome-keyring's login keyring (disk):")
print("libsecret secret_service_store_sync / lookup_sync / clear_sync, one client; stores replace items, creates")
print("add items beyond the fill level, deletes remove them; \(rounds) rounds of \(storesPerRound) stores,")
print("\(lookupsPerRound) lookups, \(createsPerRound) creates and \(createsPerRound) deletes per side, order rotating;")
print("medians with interquartile ranges")

extension ProviderInstance {
  /// Where the provider keeps its items on disk: secretd's data folder, gnome-keyring's keyrings.
  var itemFolder: URL { bus.directory.appending(path: provider == .secretd ? "data/secretd" : "data/keyrings") }
}

/// Runs `body` with a secretd --persistent whose `login` is unlocked (this first unlock makes its key).
func withPersistentSecretd<T>(
  _ body: (ProviderInstance, PersistentCollectionCalls) async throws -> T
) async throws -> T {
  try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
    let calls = try PersistentCollectionCalls(instance)
    try calls.unlock(passphrase: passphrase)
    return try await body(instance, calls)
  }
}

/// Durable stores, creates, deletes and lookups against gnome-keyring's login keyring and
/// secretd's `session`; returns the bytes gnome-keyring's keyrings took right after each fill,
/// and secretd's data folder after the rounds.
func compareDurable() async throws -> (keyring: [Int: DiskUsage], secretdAfterRounds: DiskUsage) {
  try await withPersistentSecretd { persistent, _ in
    try await withProvider(.gnomeKeyring) { keyring in
      try await withPersistentSecretd { memoryOnly, _ in
        let subjects = [
          try Subject("secretd login (disk)", persistent, collection: "default", inMemory: false),
          try Subject("gnome-keyring login (disk)", keyring, collection: "default", inMemory: false),
          try Subject("secretd session (memory)", memoryOnly, collection: "session"),
        ]
        var keyringDisk: [Int: DiskUsage] = [:]
        for size in sizes {
          for subject in subjects { try subject.fill(to: size) }
          keyringDisk[size] = try DiskUsage(of: keyring.itemFolder)
          // Each side starts with the file system settled: a sync then costs no side the writes
          // another side left to the journal.
          try alternating(rounds: rounds, sides: subjects.count) { round, side in
            sync()
            try subjects[side].measureReplaces(size, count: storesPerRound, round: round)
          }
          try alternating(rounds: rounds, sides: subjects.count) { round, side in
            try subjects[side].measureLookups(size, count: lookupsPerRound, round: round)
          }
          try alternating(rounds: rounds, sides: subjects.count) { _, side in
            sync()
            try subjects[side].measureCreatesAndDeletes(size, count: createsPerRound)
          }
        }
        reportDurable(subjects)
        return (keyringDisk, try DiskUsage(of: persistent.itemFolder))
      }
    }
  }
}

/// Unlocks of `login` holding `unlockedItems` items against unlocks of an empty `login`;
/// returns the bytes secretd's data folder took when the fill (creates only) reached each size.
func compareUnlocks() async throws -> [Int: DiskUsage] {
  try await withPersistentSecretd { full, fullCalls in
    try await withPersistentSecretd { empty, emptyCalls in
      let service = try LibSecretService(address: full.busAddress, busName: full.busName)
      var disk: [Int: DiskUsage] = [:]
      let filling = try seconds {
        for index in 0..<unlockedItems {
          try service.store(index, in: "default")
          if (sizes + [unlockedItems]).contains(index + 1) { disk[index + 1] = try DiskUsage(of: full.itemFolder) }
        }
      }
      let sides = [(full, fullCalls), (empty, emptyCalls)]
      var unlocks = [Samples(), Samples()]
      try alternating(rounds: rounds, sides: sides.count) { _, side in
        let (instance, calls) = sides[side]
        instance.stopProvider()
        try instance.startProvider()
        unlocks[side].append(try seconds { try calls.unlock(passphrase: passphrase) } * 1000)
      }
      try LibSecretService(address: full.busAddress, busName: full.busName).lookup(unlockedItems / 2)
      reportUnlocks(full: unlocks[0], empty: unlocks[1], filling: filling)
      return disk
    }
  }
}

let durable = try await compareDurable()
let filled = try await compareUnlocks()
reportDisk(secretd: filled, keyring: durable.keyring, secretdAfterRounds: durable.secretdAfterRounds)
