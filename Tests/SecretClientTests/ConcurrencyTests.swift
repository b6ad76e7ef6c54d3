import SecretTestSupport
import Testing

@testable import SecretClient

@Suite("Concurrency")
struct ConcurrencyTests {
  @Test(arguments: Provider.all)
  func eightConcurrentWritersLoseNothing(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = instance.client()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<8 {
          group.addTask {
            for item in 0..<25 {
              try await client.write(SecretValue("\(writer)-\(item)"), service: "writer-\(writer)", account: "\(item)")
            }
          }
        }
        try await group.waitForAll()
      }
      for writer in 0..<8 {
        let items = try await client.search(["service": "writer-\(writer)"], includeSecrets: true)
        #expect(Set(items.compactMap { $0.secret?.text }) == Set((0..<25).map { "\(writer)-\($0)" }))
      }
    }
  }

  /// Blocking libsecret calls must not occupy Swift's cooperative threads: with the provider
  /// frozen, eight calls hang, and yet other tasks still run; thawed, all eight finish.
  @Test(.timeLimit(.minutes(1)), arguments: Provider.all)
  func blockedCallsLeaveTheCooperativePoolFree(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let executor = BlockingExecutor()
      let client = SecretClient(bus: .address(instance.busAddress), busName: instance.busName, executor: executor)
      try await client.write(SecretValue("value"), service: "frozen", account: "a")
      instance.suspend()
      defer { instance.resume() }
      let reads = (0..<8).map { _ in
        Task { try await client.read(service: "frozen", account: "a")?.text }
      }
      try await eventually("eight calls to be in flight") { executor.busyCount >= 8 }
      // Generous: other suites may hold both of the pool's threads for seconds on a loaded machine;
      // with the pool blocked by these calls it would never run, which the time limit catches.
      let unrelated = try await withDeadline(seconds: 20, "an unrelated task") {
        await Task.detached { 6 * 7 }.value
      }
      #expect(unrelated == 42)
      instance.resume()
      for read in reads {
        #expect(try await read.value == "value")
      }
    }
  }
}
