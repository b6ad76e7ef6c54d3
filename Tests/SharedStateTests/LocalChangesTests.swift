import Foundation
import Synchronization
import Testing

@testable import SharedState

/// What a persistent key reads back never replaces a change made in this process: the two
/// guards that decide it, each on its own (the race they close is too narrow to provoke).
@Suite("Reads against local changes")
struct LocalChangesTests {
  @Test func aReadIsNotNewsOnceAWriteHasBegunSinceItStarted() {
    let known = KnownContents<Int>()
    known.replace(with: 1)
    let writes = known.writesBegun
    // The read finds 1; before it is judged, this process writes 2.
    _ = known.beginWrite(2)
    known.endWrite()
    #expect(!known.isNews(1, noWriteBegunSince: writes), "the key's older write was taken for a change")
    // A read started after that write judges by what it wrote.
    #expect(known.isNews(1, noWriteBegunSince: known.writesBegun))
    #expect(!known.isNews(2, noWriteBegunSince: known.writesBegun))
  }

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
