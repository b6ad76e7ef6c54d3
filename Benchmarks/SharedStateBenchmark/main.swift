// SharedStateBenchmark: the cost of `withLock` against a bare `Synchronization.Mutex`, and
// how many file writes the write window lets through.
//
//   swift run -c release SharedStateBenchmark
//
// Prints plain lines:
//   withLock 1 thread: N ops/s, Mutex: M ops/s, ratio R
//   fileStorage: 100000 mutations of a 2 MB value over 1.0 s: W writes
import Foundation
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
  let clock = ContinuousClock()
  let began = clock.now
  for _ in 0..<threads { start.signal() }
  done.wait()
  let elapsed = clock.now - began
  let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  return Double(threads * iterations) / seconds
}

func format(_ value: Double) -> String {
  String(Int(value.rounded()))
}

// MARK: withLock against Mutex

let environment = SharedEnvironment(
  inMemoryStorage: InMemoryStorage(), fileStorage: .fileSystem, writeClock: .live)

for threads in [1, 2, 8] {
  let iterations = 2_000_000 / threads
  let shared = environment.withValue { Shared(wrappedValue: 0, .inMemory("bench-\(threads)")) }
  let mutex = Mutex(0)
  // Warm up both paths once.
  _ = measure(threads: threads, iterations: 10_000) { n in for _ in 0..<n { shared.withLock { $0 += 1 } } }
  _ = measure(threads: threads, iterations: 10_000) { n in for _ in 0..<n { mutex.withLock { $0 += 1 } } }

  let sharedRate = measure(threads: threads, iterations: iterations) { n in
    for _ in 0..<n { shared.withLock { $0 += 1 } }
  }
  let mutexRate = measure(threads: threads, iterations: iterations) { n in
    for _ in 0..<n { mutex.withLock { $0 += 1 } }
  }
  let label = threads == 1 ? "thread" : "threads"
  let ratio = String(format: "%.2f", mutexRate / sharedRate)
  print("withLock \(threads) \(label): \(format(sharedRate)) ops/s, Mutex: \(format(mutexRate)) ops/s, ratio \(ratio)")
}

// MARK: Writes through the window

struct Document: Codable, Sendable {
  var payload: String
  var revision: Int
}

final class WriteCounter: Sendable {
  private let count = Mutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}

let folder = FileManager.default.temporaryDirectory
  .appending(component: "SharedStateBenchmark-\(UUID().uuidString)", directoryHint: .isDirectory)
let writes = WriteCounter()
let counting = SharedEnvironment(
  inMemoryStorage: InMemoryStorage(),
  fileStorage: FileStorage.fileSystem.observingWrites { _, _ in writes.increment() },
  writeClock: .live)
let document = counting.withValue {
  Shared(
    wrappedValue: Document(payload: String(repeating: "x", count: 2 * 1024 * 1024), revision: 0),
    .fileStorage(folder.appending(component: "document.json")))
}

// 100,000 mutations spread evenly over one second: 100 batches of 1,000, one every 10 ms.
let mutations = 100_000
let batches = 100
let clock = ContinuousClock()
let began = clock.now
for batch in 0..<batches {
  for _ in 0..<(mutations / batches) { document.withLock { $0.revision += 1 } }
  let next = began + .milliseconds(10 * (batch + 1))
  if next > clock.now { Thread.sleep(forTimeInterval: Double((next - clock.now).components.attoseconds) / 1e18) }
}
let spent = clock.now - began
// Let the last window close (1 s), then count.
Thread.sleep(forTimeInterval: 1.5)
let seconds = Double(spent.components.seconds) + Double(spent.components.attoseconds) / 1e18
print(
  "fileStorage: \(mutations) mutations of a 2 MB value over \(String(format: "%.2f", seconds)) s: "
    + "\(writes.value) writes (last revision on disk: "
    + "\((try? JSONDecoder().decode(Document.self, from: Data(contentsOf: folder.appending(component: "document.json"))))?.revision ?? -1))"
)
try? FileManager.default.removeItem(at: folder)
