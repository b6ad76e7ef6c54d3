import BenchmarkSupport
import Foundation
import ProviderBenchmarkSupport

/// The tables (rates, and secretd login's advantage round by round) and each call's daemon CPU.
func reportDurable(_ subjects: [Subject]) {
  for size in sizes {
    printRateTables(subjects, at: size, referenceName: "secretd login")
    for subject in subjects {
      print(
        "  \(subject.name): daemon CPU per store \(subject.replaces.daemonMicroseconds(size)) µs, per create "
          + "\(subject.creates.daemonMicroseconds(size)) µs, per delete \(subject.deletes.daemonMicroseconds(size)) "
          + "µs, per lookup \(subject.lookups.daemonMicroseconds(size)) µs")
    }
  }
}

/// Unlock times with and without the items, and what the items add, round by round.
func reportUnlocks(full: Samples, empty: Samples, filling: Double) {
  let beyond = Samples(zip(full.values, empty.values).map { $0 - $1 })
  print("")
  print(
    "Unlocking login with \(unlockedItems) items (UnlockWithPassphrase just after a restart; Argon2id at secretd's")
  print("standard cost, 3 passes over 64 MiB in 4 lanes, on both sides; n rounds, order rotating):")
  print("  with \(unlockedItems) items: \(full.formatted(1)) ms; empty login: \(empty.formatted(1)) ms")
  print("  the items beyond the KDF (with them − empty, round by round): \(beyond.formatted(1)) ms")
  print(String(format: "  filling them took %.1f s (%.0f durable creates/s)", filling, Double(unlockedItems) / filling))
}

/// Bytes on disk per item, by fill level.
func reportDisk(secretd: [Int: DiskUsage], keyring: [Int: DiskUsage], secretdAfterRounds: DiskUsage) {
  print("")
  print("Bytes on disk per item:")
  for (name, usage) in [("secretd login, filled by creates", secretd), ("gnome-keyring login", keyring)] {
    print("  \(name):")
    for size in usage.keys.sorted() { print("    at \(size) items: \(usage[size]?.perItem(size) ?? "?")") }
  }
  let size = sizes.last ?? 0
  print(
    "  secretd login after the rounds at \(size) items (superseded records kept until an unlock compacts the log): "
      + secretdAfterRounds.perItem(size))
}
