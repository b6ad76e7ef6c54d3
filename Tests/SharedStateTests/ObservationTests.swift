import Foundation
import Observation
import SecretTestSupport
import SharedState
import Testing

@Suite("Observation and AsyncSequence of values")
struct ObservationTests {
  @Test func withLockNotifiesObservationTracking() {
    let shared = Shared(value: 0)
    let changes = CountBox()
    withObservationTracking {
      _ = shared.wrappedValue
    } onChange: {
      changes.increment()
    }
    shared.withLock { $0 += 1 }
    #expect(changes.value == 1)
  }

  /// Swift 6.2's `Observations` sequence is told by `withLock` and yields each new value.
  @Test func observationsYieldsEveryChangeMadeWithWithLock() async throws {
    let shared = Shared(value: 0)
    let seen = try await withDeadline(seconds: 10, "Observations to reach 3") {
      var seen: [Int] = []
      for await value in Observations({ shared.wrappedValue }) {
        seen.append(value)
        if value == 3 { break }
        shared.withLock { $0 += 1 }
      }
      return seen
    }
    #expect(seen == [0, 1, 2, 3])
  }

  @Test func loadErrorIsObservable() {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    let changes = CountBox()
    withObservationTracking {
      _ = shared.loadError
    } onChange: {
      changes.increment()
    }
    backend.push(.failure(TestFailure(message: "x")))
    #expect(changes.value == 1)
  }

  @Test func valuesStartWithTheCurrentValueThenFollowChanges() async {
    let shared = Shared(value: 1)
    let stream = shared.values
    var iterator = stream.makeAsyncIterator()
    #expect(await iterator.next() == 1)
    shared.withLock { $0 = 2 }
    #expect(await iterator.next() == 2)
    shared.withLock { $0 = 3 }
    shared.withLock { $0 = 4 }
    // A slow consumer gets the latest value.
    #expect(await iterator.next() == 4)
  }

  @Test func valuesSeeChangesFromOtherThreads() async {
    let shared = Shared(value: 0)
    let stream = shared.values
    Thread { for _ in 0..<100 { shared.withLock { $0 += 1 } } }.start()
    let seen = await firstValue(of: stream) { $0 == 100 }
    #expect(seen == 100)
  }

  @Test func endingTheLastStreamReleasesTheReference() async {
    let backend = Backend<Int>(stored: 1)
    var shared: Shared<Int>? = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    var stream = shared?.values
    var iterator = stream?.makeAsyncIterator()
    #expect(await iterator?.next() == 1)
    shared = nil
    #expect(backend.state.withLock { $0.cancels } == 0, "a stream being iterated keeps the value alive")
    stream = nil
    iterator = nil
    #expect(backend.state.withLock { $0.cancels } == 1)
  }

  @Test func projectedValuesFollowTheMember() async {
    struct Pair: Sendable {
      var a: Int
      var b: Int
    }
    let shared = Shared(value: Pair(a: 1, b: 1))
    let stream = shared.b.values
    shared.withLock { $0.b = 5 }
    let seen = await firstValue(of: stream) { $0 == 5 }
    #expect(seen == 5)
  }
}
