import BenchmarkSupport
import Foundation
import ProviderBenchmarkSupport

/// The tables (rates, and secretd's advantage round by round), the time per call, memory.
func report(_ subjects: [Subject]) {
  let secretd = subjects[0]
  for size in sizes {
    printRateTables(subjects, at: size, referenceName: "secretd", hasCreates: \.inMemory)
    for subject in subjects {
      let wall = 1e6 / max(subject.lookups.rate(size).median, 1)
      let daemon = Double(subject.lookups.daemonMicroseconds(size))
      let client = (subject.lookupClientCPU[size]?.median ?? 0) * 1e6
      var line =
        "  \(subject.name): a lookup takes \(Int(wall)) µs = daemon CPU \(Int(daemon)) + client CPU \(Int(client)) "
        + "+ rest \(Int(max(0, wall - daemon - client))) (bus daemon, wake-ups); daemon CPU per store "
        + "\(subject.replaces.daemonMicroseconds(size)) µs"
      if subject.inMemory {
        line +=
          ", per create \(subject.creates.daemonMicroseconds(size)) µs, per delete "
          + "\(subject.deletes.daemonMicroseconds(size)) µs"
      }
      print(line)
    }
  }
  print("")
  for subject in subjects {
    print("memory after \(sizes.last ?? 0) items: \(subject.name) \(subject.memory.map { "\($0)" } ?? "?")")
  }
  func flatness(_ figures: CallFigures) -> Double {
    figures.rate(sizes.last ?? 0).median / max(figures.rate(sizes.first ?? 0).median, 1)
  }
  print(
    String(
      format: "secretd flatness (rate at 1,300 / rate at 300): stores %.2f, lookups %.2f, creates %.2f, deletes %.2f",
      flatness(secretd.replaces), flatness(secretd.lookups), flatness(secretd.creates), flatness(secretd.deletes)))
}
