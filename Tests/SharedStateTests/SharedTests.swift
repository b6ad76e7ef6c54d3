import Foundation
import Observation
import SharedState
import Synchronization
import Testing

@Suite("Shared: reading and withLock")
struct SharedTests {
  @Test func sharedValueIsAReference() {
    let shared = Shared(value: 1)
    let copy = shared
    copy.withLock { $0 += 1 }
    #expect(shared.wrappedValue == 2)
  }

  @Test func withLockReturnsTheBodyResult() {
    let shared = Shared(value: [1, 2])
    let count = shared.withLock { values -> Int in
      values.append(3)
      return values.count
    }
    #expect(count == 3)
    #expect(shared.wrappedValue == [1, 2, 3])
  }

  @Test func withLockRethrowsTypedErrors() {
    let shared = Shared(value: 0)
    #expect(throws: TestFailure.self) {
      try shared.withLock { (value: inout Int) throws(TestFailure) in
        value = 5
        throw TestFailure(message: "no")
      }
    }
    // A body that changed the value before throwing keeps its change.
    #expect(shared.wrappedValue == 5)
  }

  @Test func eightThreadsTimesTenThousandIncrementsLoseNothing() {
    testEnvironment().withValue {
      let plain = Shared(value: 0)
      let keyed = Shared(wrappedValue: 0, .inMemory("counter"))
      let group = DispatchGroup()
      for _ in 0..<8 {
        group.enter()
        let thread = Thread {
          for _ in 0..<10_000 {
            plain.withLock { $0 += 1 }
            keyed.withLock { $0 += 1 }
          }
          group.leave()
        }
        thread.start()
      }
      group.wait()
      #expect(plain.wrappedValue == 80_000)
      #expect(keyed.wrappedValue == 80_000)
    }
  }

  @Test func concurrentMutationsSaveTheLatestValueLast() {
    let backend = Backend<Int>()
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    let group = DispatchGroup()
    for _ in 0..<4 {
      group.enter()
      Thread {
        for _ in 0..<1_000 { shared.withLock { $0 += 1 } }
        group.leave()
      }.start()
    }
    group.wait()
    let saves = backend.state.withLock { $0.saves }
    #expect(saves.last?.value == 4_000)
    #expect(saves.map(\.value) == saves.map(\.value).sorted())
    #expect(saves.allSatisfy { $0.context == .didSet })
  }

  @Test func aSlowSaveDoesNotHoldUpMutationsOnOtherThreads() {
    let backend = Backend<Int>()
    let held = HeldSave()
    backend.state.withLock { $0.heldSave = held }
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    let first = DispatchSemaphore(value: 0)
    Thread {
      shared.withLock { $0 = 1 }
      first.signal()
    }.start()
    #expect(held.entered())
    #expect(finishesOnAnotherThread { shared.withLock { $0 = 2 } }, "a mutation waited for a save")
    held.release()
    #expect(first.wait(timeout: .now() + .seconds(10)) == .success)
    // The thread that was saving saved the later value after its own.
    #expect(backend.state.withLock { $0.saves.map(\.value) } == [1, 2])
  }

  @Test(.timeLimit(.minutes(1)))
  func saveDuringASaveInProgressSavesTheLatestValueAfterIt() async throws {
    let backend = Backend<Int>()
    let held = HeldSave()
    backend.state.withLock { $0.heldSave = held }
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    Thread { shared.withLock { $0 = 1 } }.start()
    #expect(held.entered())
    shared.withLock { $0 = 2 }
    let saving = Task { try await shared.save() }
    held.release()
    try await saving.value
    let saves = backend.state.withLock { $0.saves }
    #expect(saves.first?.value == 1)
    #expect(saves.last?.value == 2)
    #expect(saves.last?.context == .userInitiated)
    #expect(saves.map(\.value) == saves.map(\.value).sorted())
  }

  @Test func anObserverOfTheSaveErrorMayMutateTheValue() {
    let backend = Backend<Int>()
    backend.state.withLock { $0.saveFailure = TestFailure(message: "disk full") }
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    withObservationTracking {
      _ = shared.saveError
    } onChange: {
      shared.withLock { $0 += 100 }
    }
    #expect(finishesOnAnotherThread { shared.withLock { $0 = 1 } }, "the observer's mutation deadlocked")
    #expect(backend.state.withLock { $0.saves.map(\.value) } == [1, 101])
  }

  @Test func saveIsUserInitiated() async throws {
    let backend = Backend<Int>()
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    shared.withLock { $0 = 3 }
    try await shared.save()
    let contexts = backend.state.withLock { $0.saves.map(\.context) }
    #expect(contexts == [.didSet, .userInitiated])
  }

  @Test func memberProjectionSharesTheReference() {
    struct User: Sendable, Equatable {
      var name: String
      var age: Int
    }
    let user = Shared(value: User(name: "Ana", age: 30))
    let name = user.name
    name.withLock { $0 = "Bea" }
    #expect(user.wrappedValue.name == "Bea")
    user.withLock { $0.age = 31 }
    #expect(user.age.wrappedValue == 31)
  }

  @Test func propertyWrapperSyntax() {
    testEnvironment().withValue {
      @Shared(.inMemory("wrapped")) var count = 10
      $count.withLock { $0 += 1 }
      #expect(count == 11)
      @Shared(.inMemory("wrapped")) var again = 0
      #expect(again == 11)
    }
  }
}
