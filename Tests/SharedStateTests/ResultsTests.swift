import SharedState
import Synchronization
import Testing

@Suite("Load and save results")
struct ResultsTests {
  @Test func absentGivesTheDefaultWithoutError() {
    let backend = Backend<Int>()
    let shared = Shared(wrappedValue: 42, ControlledKey(backend: backend))
    #expect(shared.wrappedValue == 42)
    #expect(shared.loadError == nil)
    #expect(!shared.isLoading)
  }

  @Test func failureKeepsTheValueAndShowsTheError() async throws {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    #expect(shared.wrappedValue == 1)
    backend.state.withLock { $0.loadFailure = TestFailure(message: "locked") }
    await #expect(throws: TestFailure(message: "locked")) { try await shared.load() }
    #expect(shared.wrappedValue == 1)
    #expect(shared.loadError as? TestFailure == TestFailure(message: "locked"))
    // A later success clears it.
    backend.state.withLock {
      $0.loadFailure = nil
      $0.stored = 2
    }
    try await shared.load()
    #expect(shared.wrappedValue == 2)
    #expect(shared.loadError == nil)
  }

  @Test func subscriberResultsFollowTheSameRules() {
    let backend = Backend<Int>(stored: 5)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    backend.push(.failure(TestFailure(message: "gone")))
    #expect(shared.wrappedValue == 5)
    #expect(shared.loadError != nil)
    backend.push(.success(9))
    #expect(shared.wrappedValue == 9)
    #expect(shared.loadError == nil)
    backend.push(.success(nil))
    #expect(shared.wrappedValue == 0)
  }

  @Test func saveErrorsAreVisibleAndClearedByALaterSuccess() async throws {
    let backend = Backend<Int>()
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    backend.state.withLock { $0.saveFailure = TestFailure(message: "disk full") }
    shared.withLock { $0 = 1 }
    #expect(shared.saveError as? TestFailure == TestFailure(message: "disk full"))
    await #expect(throws: TestFailure.self) { try await shared.save() }
    backend.state.withLock { $0.saveFailure = nil }
    try await shared.save()
    #expect(shared.saveError == nil)
    #expect(backend.state.withLock { $0.stored } == 1)
  }

  @Test func requireThrowsWhenAbsent() async throws {
    let backend = Backend<Int>()
    await #expect(throws: SharedStateError.self) {
      _ = try await Shared(require: ControlledKey(backend: backend))
    }
    backend.state.withLock { $0.stored = 4 }
    let shared = try await Shared(require: ControlledKey(backend: backend))
    #expect(shared.wrappedValue == 4)
    #expect(backend.state.withLock { $0.subscribes } == 1)
  }

  @Test func requireRethrowsTheLoadError() async {
    let backend = Backend<Int>()
    backend.state.withLock { $0.loadFailure = TestFailure(message: "denied") }
    await #expect(throws: TestFailure(message: "denied")) {
      _ = try await SharedReader(require: ControlledKey(backend: backend))
    }
  }
}

@Suite("Continuations: exactly once, reported otherwise")
struct ContinuationTests {
  @Test func resumedTwiceIsReportedNotFatal() async throws {
    let log = IssueLog()
    try await testEnvironment(log: log).withValue {
      let backend = Backend<Int>(stored: 1)
      backend.state.withLock { $0.misbehaviour = .resumeTwice }
      let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
      #expect(shared.wrappedValue == 1)
      try await shared.load()
    }
    #expect(log.all.filter { $0.contains("resumed more than once") }.count == 2)
  }

  @Test func aLoadNeverResumedIsReportedAndEndsAsIfNothingWereStored() async throws {
    let log = IssueLog()
    try await testEnvironment(log: log).withValue {
      let backend = Backend<Int>(stored: 1)
      backend.state.withLock { $0.misbehaviour = .neverResume }
      let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
      #expect(shared.wrappedValue == 0)
      #expect(!shared.isLoading)
      shared.withLock { $0 = 5 }
      try await shared.load()
      #expect(shared.wrappedValue == 5, "a load that never finished changed the value")
      #expect(shared.loadError == nil)
      #expect(!shared.isLoading)
    }
    #expect(log.all.filter { $0.contains("released without being resumed") }.count == 2)
  }

  @Test func aSaveNeverResumedIsReportedAndFails() async throws {
    let log = IssueLog()
    await testEnvironment(log: log).withValue {
      let shared = Shared(wrappedValue: 0, SilentSaveKey())
      await #expect(throws: SharedStateError.self) { try await shared.save() }
      #expect(shared.saveError is SharedStateError)
    }
    #expect(log.all.contains { $0.contains("released without being resumed") && $0.contains("save fails") })
  }

  @Test func subscriptionCancelsOnceAlsoOnRelease() {
    let count = CountBox()
    var subscription: SharedSubscription? = SharedSubscription { count.increment() }
    subscription?.cancel()
    subscription?.cancel()
    subscription = nil
    _ = subscription
    #expect(count.value == 1)
    do {
      _ = SharedSubscription { count.increment() }
    }
    #expect(count.value == 2)
  }
}

final class CountBox: Sendable {
  private let count = Synchronization.Mutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}

/// A key whose saves never resume their continuation.
private struct SilentSaveKey: SharedKey {
  var id: String { "silent-save" }
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    continuation.resumeReturningInitialValue()
  }
  func subscribe(context: LoadContext<Int>, subscriber: SharedSubscriber<Int>) -> SharedSubscription {
    SharedSubscription {}
  }
  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {}
}
