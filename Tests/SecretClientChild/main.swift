// A process of its own for the claim that SecretClient's blocking libsecret calls leave Swift's
// pool free. In the test runner any other test may block the pool's threads for seconds (a
// process waited for, a provider stopped), so only a process where nothing else runs can tell a
// pool these calls hold from a pool other work holds.
//
//   secret-client-child ADDRESS BUS_NAME PROVIDER_PID
//
// Stores an item, freezes the provider (SIGSTOP), and starts one read more than the pool has
// threads. SecretClient adds a blocking thread whenever its queued calls outnumber its idle
// threads, and none returns while the provider is frozen, so as many threads as reads means every
// read is in flight on them. Then a task unrelated to them must run on the pool while they hang;
// then the provider is thawed and every read must return the item. All waiting is done here on
// the main thread, which is not the pool's, each wait with a deadline. One line per step that
// held; exit 1 at the first that did not.
import Foundation
import SecretClient
import Synchronization

func fail(_ reason: String) -> Never {
  FileHandle.standardError.write(Data("secret-client-child: \(reason)\n".utf8))
  exit(1)
}

/// Waits on this (main, non-pool) thread for `task`, at most `seconds`.
@discardableResult
func wait<T: Sendable>(_ what: String, seconds: Int, for task: Task<T, any Error>) -> T {
  let outcome = Mutex<Result<T, any Error>?>(nil)
  let done = DispatchSemaphore(value: 0)
  Task.detached {
    let result = await task.result
    outcome.withLock { $0 = result }
    done.signal()
  }
  guard done.wait(timeout: .now() + .seconds(seconds)) == .success else {
    fail("\(what) did not finish within \(seconds) s")
  }
  switch outcome.withLock({ $0 }) {
  case .success(let value): return value
  case .failure(let error): fail("\(what) failed: \(error)")
  case nil: fail("\(what) gave no outcome")
  }
}

/// SecretClient's blocking threads, by the name it gives them.
func blockingThreads() -> Int {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
  return tasks.count { task in
    let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
    return name?.hasPrefix(SecretClient.blockingThreadName) == true
  }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let provider = Int32(arguments[3]), provider > 0 else {
  fail("usage: secret-client-child ADDRESS BUS_NAME PROVIDER_PID")
}
// Swift's pool has a thread per core.
let calls = ProcessInfo.processInfo.activeProcessorCount + 1
guard calls <= 64 else { fail("\(calls) calls would need more than SecretClient's 64 blocking threads") }
let client = SecretClient(bus: .address(arguments[1]), busName: arguments[2])
do { try client.write(SecretValue("value"), service: "frozen", account: "a") } catch {
  fail("the first write failed: \(error)")
}

kill(provider, SIGSTOP)
let reads = (0..<calls).map { _ in Task.detached { try await client.read(service: "frozen", account: "a")?.text } }
let deadline = ContinuousClock.now + .seconds(10)
while blockingThreads() < calls {
  guard ContinuousClock.now < deadline else { fail("\(blockingThreads()) of \(calls) calls in flight after 10 s") }
  usleep(10_000)
}
print("more calls in flight on SecretClient's own threads than the pool has threads")
wait("an unrelated task", seconds: 10, for: Task.detached {})
print("an unrelated task ran on the pool while they hung")

kill(provider, SIGCONT)
for read in reads {
  guard wait("a read after the thaw", seconds: 20, for: read) == "value" else { fail("a read lost the value") }
}
print("thawed, every read returned the value")
