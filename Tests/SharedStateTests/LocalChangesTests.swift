import Foundation
import Synchronization
import Testing

@testable import SharedState

/// What a persistent key reads back never replaces a change made in this process: the guard a
/// shared reference keeps, on its own (the race it closes is too narrow to provoke).
@Suite("Reads against local changes")
struct LocalChangesTests {
  @Test func aValueReadBeforeAMutationDoesNotReplaceIt() throws {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    let subscriber = try #require(backend.state.withLock { $0.subscriber })
    let mark = try #require(subscriber.localMark())
    shared.withLock { $0 = 5 }
    subscriber.yield(with: .success(9), unlessChangedSince: mark)
    #expect(shared.wrappedValue == 5, "a read older than the mutation replaced it")
    // Read again after the mutation reached the key: applied.
    let later = try #require(subscriber.localMark())
    subscriber.yield(with: .success(9), unlessChangedSince: later)
    #expect(shared.wrappedValue == 9)
  }

  @Test func noReadIsStartedWhileAMutationIsOnItsWayToTheKey() throws {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    let subscriber = try #require(backend.state.withLock { $0.subscriber })
    #expect(subscriber.localMark() != nil)
    let held = HeldSave()
    backend.state.withLock { $0.heldSave = held }
    let mutating = Thread { shared.withLock { $0 = 2 } }
    mutating.start()
    #expect(held.entered())
    #expect(subscriber.localMark() == nil, "a read may start while the key has not stored the mutation")
    held.release()
  }
}
