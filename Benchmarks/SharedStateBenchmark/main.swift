// SharedStateBenchmark: the cost of `withLock` against a bare `Synchronization.Mutex` doing
// the same increment, and against the least any `Observable` value costs (Observation's
// registrar told around the same Mutex); and how many file writes the write window lets
// through.
//
//   swift run -c release SharedStateBenchmark
//
// The two sides alternate round by round (which goes first rotates); each figure is the median
// of the rounds with its interquartile range, and the ratio is taken round by round.
import BenchmarkSupport
import Foundation
import Observation
import SharedState
import Synchronization

/// Runs `body(iterations)` on `threads` threads at once and returns operations per second.
func measure(threads: Int, iterations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
  let ready = DispatchGroup()
  let done = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  for _ in 0..<threads {
    ready.enter()
    done.enter()
    Thread {
      ready.leave()
      start.wait()
      body(iterations)
      done.leave()
    }.start()
  }
  ready.wait()
  let elapsed = seconds {
    for _ in 0..<threads { start.signal() }
    done.wait()
  }
  return Double(threads * iterations) / elapsed
}

// MARK: withLock against Mutex

/// A counter that observers can watch, as cheap as Observation allows: its registrar told
/// before and after the Mutex, as `Shared` must tell it for `withObservationTracking` to work.
final class ObservedCounter: Observable, Sendable {
  private let registrar = ObservationRegistrar()
  private let count = Mutex(0)
  private let path: any KeyPath<ObservedCounter, Int> & Sendable = \.value

  var value: Int {
    registrar.access(self, keyPath: path)
    return count.withLock { $0 }
  }

  func increment() {
    registrar.willSet(self, keyPath: path)
    defer { registrar.didSet(self, keyPath: path) }
    count.withLock { $0 += 1 }
  }
}

/// Counts events from any thread (the observer's calls, the file writes).
final class EventCounter: Sendable {
  private let count = Mutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}

let environment = SharedEnvironment(
  inMemoryStorage: InMemoryStorage(), fileStorage: .fileSystem, writeClock: .live)
let rounds = 9

print(
  "withLock { $0 += 1 } on an in-memory Shared, an observer registered at the start of each round\n"
    + "(withObservationTracking: the round's first mutation tells it, Observation then removes it),\n"
    + "against Mutex.withLock { $0 += 1 } and the same Mutex with an ObservationRegistrar told around it,\n"
    + "ops/s, \(rounds) alternating rounds:")
// One thread, and one per core: more threads than cores measure the scheduler, not the lock.
for threads in Set([1, ProcessInfo.processInfo.activeProcessorCount]).sorted() {
  let shared = environment.withValue { Shared(wrappedValue: 0, .inMemory("bench-\(threads)")) }
  let mutex = Mutex(0)
  let observed = ObservedCounter()
  let sides: [@Sendable (Int) -> Void] = [
    { n in for _ in 0..<n { shared.withLock { $0 += 1 } } },
    { n in for _ in 0..<n { mutex.withLock { $0 += 1 } } },
    { n in for _ in 0..<n { observed.increment() } },
  ]
  let changes = EventCounter()
  // Warm-up, which also sizes the rounds: ~0.2 s for the slower side.
  let slowest = sides.map { measure(threads: threads, iterations: 10_000 / threads, $0) }.min() ?? 1
  let iterations = max(1_000, Int(slowest * 0.2) / threads)
  var rates = [Samples(), Samples(), Samples()]
  alternating(rounds: rounds, sides: sides.count) { _, side in
    if side == 0 {
      withObservationTracking {
        _ = shared.wrappedValue
      } onChange: {
        changes.increment()
      }
    }
    rates[side].append(measure(threads: threads, iterations: iterations, sides[side]))
  }
  // At least once a round: threads mutating at once may each reach the observer before
  // Observation cancels it.
  guard changes.value >= rounds else {
    print("the observer heard \(changes.value) of \(rounds) rounds' first changes")
    exit(1)
  }
  print(
    "  \(threads) thread\(threads == 1 ? "" : "s"): Shared \(rates[0]), Mutex \(rates[1]), Mutex with registrar \(rates[2])\n"
      + "    Shared/Mutex \(Samples.ratios(rates[1], rates[0]).formatted(2)); "
      + "Mutex with registrar/Mutex \(Samples.ratios(rates[1], rates[2]).formatted(2)); "
      + "Shared/Mutex with registrar \(Samples.ratios(rates[2], rates[0]).formatted(2))")
}

// MARK: Writes through the window

struct Document: Codable, Sendable {
  var payload: String
  var revision: Int
}

let folder = FileManager.default.temporaryDirectory
  .appending(component: "SharedStateBenchmark-\(UUID().uuidString)", directoryHint: .isDirectory)
let writes = EventCounter()
let counting = SharedEnvironment(
  inMemoryStorage: InMemoryStorage(),
  fileStorage: FileStorage.fileSystem.observingWrites { _, _ in writes.increment() },
  writeClock: .live)
let document = counting.withValue {
  Shared(
    wrappedValue: Document(payload: String(repeating: "x", count: 2 * 1024 * 1024), revision: 0),
    .fileStorage(folder.appending(component: "document.json"), writeWindow: .seconds(1)))
}

// As many mutations as one thread makes in 3 s, unpaced: the windows they open and close are
// the only thing between them and the disk.
let span = 3.0
var mutations = 0
let clock = ContinuousClock()
let end = clock.now + .seconds(span)
while clock.now < end {
  for _ in 0..<1_000 { document.withLock { $0.revision += 1 } }
  mutations += 1_000
}
try await document.save()
let onDisk =
  (try? JSONDecoder().decode(Document.self, from: Data(contentsOf: folder.appending(component: "document.json"))))?
  .revision
print(
  "fileStorage, 1 s window: \(mutations) mutations of a 2 MB value in \(Int(span)) s -> \(writes.value) writes "
    + "(the first at once, one per window after it, and the save at the end: at most \(Int(span) + 2)); "
    + "last revision on disk: \(onDisk ?? -1) of \(mutations)"
)
try? FileManager.default.removeItem(at: folder)
