import SecretClient
import SecretTestSupport
import Testing

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
  /// frozen, more calls hang than the pool has threads, and yet other tasks still run; thawed,
  /// they all finish. Checked in a process of its own (secret-client-child), whose pool no other
  /// test keeps busy; it has a deadline for each step, and `timeout` bounds the whole.
  @Test(arguments: Provider.all)
  func blockedCallsLeaveTheCooperativePoolFree(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let child = try builtExecutable("secret-client-child").path
      let run = try await runProcessOnOwnThread(
        "timeout", ["--kill-after=5", "60", child, instance.busAddress, instance.busName, "\(instance.pid)"],
        environment: instance.environment, in: instance.bus.directory)
      #expect(run.status == 0, "exit \(run.status): \(run.stderrText)")
      #expect(
        run.stdoutText == """
          more calls in flight on SecretClient's own threads than the pool has threads
          an unrelated task ran on the pool while they hung
          thawed, every read returned the value

          """, "exit \(run.status): \(run.stderrText)")
    }
  }
}
