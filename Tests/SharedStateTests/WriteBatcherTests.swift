import Glibc
import SharedState
import Synchronization
import Testing

final class WriteLog<Value: Sendable>: Sendable {
  private let values = Mutex<[Value]>([])
  var all: [Value] { values.withLock { $0 } }
  func append(_ value: Value) { values.withLock { $0.append(value) } }
}

@Suite("WriteBatcher")
struct WriteBatcherTests {
  let clock = TestWriteClock()
  let log = WriteLog<Int>()

  func makeBatcher(window: Duration = .seconds(1)) -> WriteBatcher<Int> {
    WriteBatcher(window: window, clock: clock.clock, lead: WriteBatcher<Int>.inPlace, flushesAtExit: false) { [log] in
      log.append($0)
    }
  }

  /// A batcher whose writes made at once wait in `leads` until the test runs them.
  func makeBatcher(holdingFirstWritesIn leads: WriteLog<@Sendable () -> Void>) -> WriteBatcher<Int> {
    WriteBatcher(
      clock: clock.clock, lead: { leads.append($0) }, flushesAtExit: false, write: { [log] in log.append($0) })
  }

  @Test func theFirstValueIsWrittenAtOnceAndTheLatestOfTheRestWhenTheWindowCloses() {
    let batcher = makeBatcher()
    for value in 1...100 { batcher.schedule(value) }
    #expect(log.all == [1])
    #expect(batcher.hasPendingWrite)
    clock.advance(by: .seconds(1))
    #expect(log.all == [1, 100])
    // The write at 1 s opened the next window: these wait for its end.
    batcher.schedule(101)
    clock.advance(by: .milliseconds(500))
    batcher.schedule(102)
    clock.advance(by: .milliseconds(500))
    #expect(log.all == [1, 100, 102])
    // That window gathers nothing more: the batch ends, and the next value leads a new one.
    clock.advance(by: .seconds(1))
    batcher.schedule(103)
    #expect(log.all == [1, 100, 102, 103])
  }

  @Test func noStretchOfOneWindowHoldsMoreThanTwoWrites() {
    let times = WriteLog<Duration>()
    let batcher = WriteBatcher<Int>(
      window: .seconds(1), clock: clock.clock, lead: WriteBatcher<Int>.inPlace, flushesAtExit: false
    ) {
      [clock] _ in times.append(clock.now)
    }
    // A change every 100 ms for 10 s.
    for value in 0..<100 {
      batcher.schedule(value)
      clock.advance(by: .milliseconds(100))
    }
    let written = times.all
    #expect(written.count >= 10, "\(written)")
    for (index, time) in written.enumerated() {
      let inWindow = written[index...].prefix { $0 < time + .seconds(1) }
      #expect(inWindow.count <= 2, "writes at \(written)")
    }
  }

  @Test func aFirstWriteNotYetMadeOnItsThreadIsMadeByAFlush() throws {
    let leads = WriteLog<@Sendable () -> Void>()
    let batcher = makeBatcher(holdingFirstWritesIn: leads)
    batcher.schedule(1)
    #expect(log.all.isEmpty)
    #expect(batcher.hasPendingWrite, "a first write on its way is not counted as pending")
    // What exit does: the write on its way must not be left behind.
    try batcher.flush()
    #expect(log.all == [1])
    // When its thread gets to it, it is not written twice.
    for write in leads.all { write() }
    #expect(log.all == [1])
  }

  @Test func writeNowCancelsThePendingWriteAndTheWindow() throws {
    let batcher = makeBatcher()
    batcher.schedule(1)
    batcher.schedule(2)
    try batcher.writeNow(3)
    #expect(log.all == [1, 3])
    clock.advance(by: .seconds(1))
    #expect(log.all == [1, 3])
    #expect(clock.scheduledCount == 0)
    batcher.schedule(4)
    #expect(log.all == [1, 3, 4], "the next change after an explicit write is not written at once")
  }

  @Test func aValueScheduledAfterAClaimedWriteIsNeverReplacedByIt() throws {
    let batcher = makeBatcher()
    batcher.schedule(1)
    let write = batcher.claimWriteNow(2)
    let completions = WriteLog<Bool>()
    batcher.schedule(3) { completions.append((try? $0.get()) != nil) }
    #expect(log.all == [1, 3], "the value scheduled after the claim leads a new window")
    try write()
    #expect(log.all == [1, 3], "the older claimed value replaced a newer one")
    #expect(completions.all == [true])
  }

  @Test func anExplicitWriteOfTheValueAChangeIsWritingWaitsForThatWriteInsteadOfRepeatingIt() throws {
    let leads = WriteLog<@Sendable () -> Void>()
    let batcher = makeBatcher(holdingFirstWritesIn: leads)
    batcher.schedule(1)
    let save = batcher.claimWriteNow(1, joiningLeadIf: { $0 == 1 })
    for write in leads.all { write() }
    try save()
    #expect(log.all == [1])
    // Positive control: a value other than the one on its way is written by the explicit write.
    batcher.schedule(2)
    let other = batcher.claimWriteNow(3, joiningLeadIf: { $0 == 3 })
    for write in leads.all.dropFirst() { write() }
    try other()
    #expect(log.all == [1, 2, 3])
  }

  @Test func anExplicitWriteOfTheLeadingValueWritesItselfOnceALaterValueWasWritten() throws {
    let leads = WriteLog<@Sendable () -> Void>()
    let batcher = makeBatcher(holdingFirstWritesIn: leads)
    batcher.schedule(1)
    try batcher.claimWriteNow(2)()
    let save = batcher.claimWriteNow(1, joiningLeadIf: { $0 == 1 })
    // The first write is now older than 2, which is stored: its thread skips it.
    for write in leads.all { write() }
    try save()
    #expect(log.all == [2, 1], "the explicit write joined a write that was never made")
  }

  @Test func anExplicitWriteThatWaitedForAChangesWriteReportsItsFailure() {
    struct Refused: Error {}
    let leads = WriteLog<@Sendable () -> Void>()
    let batcher = WriteBatcher<Int>(
      clock: clock.clock, lead: { leads.append($0) }, flushesAtExit: false, write: { _ in throw Refused() })
    batcher.schedule(1)
    let save = batcher.claimWriteNow(1, joiningLeadIf: { $0 == 1 })
    for write in leads.all { write() }
    #expect(throws: Refused.self) { try save() }
  }

  @Test func anExplicitWriteWaitingForAChangesWriteIsAnsweredByAFlushThatMakesIt() throws {
    let leads = WriteLog<@Sendable () -> Void>()
    let batcher = makeBatcher(holdingFirstWritesIn: leads)
    batcher.schedule(1)
    let save = batcher.claimWriteNow(1, joiningLeadIf: { $0 == 1 })
    try batcher.flush()
    try save()
    #expect(log.all == [1])
  }

  @Test func aValueStoredDespiteAnErrorIsNeverReplacedByAnOlderOne() throws {
    let written = WriteLog<Int>()
    let batcher = WriteBatcher<Int>(clock: clock.clock, lead: WriteBatcher<Int>.inPlace, flushesAtExit: false) {
      value in
      written.append(value)
      if value == 2 { throw FileStorageError.replacedButNotSynced(path: "/tmp/x", reason: "I/O error") }
    }
    let older = batcher.claimWriteNow(1)
    batcher.schedule(2)
    try older()
    #expect(written.all == [2], "the older value replaced the stored one")
  }

  @Test func completionsReceiveTheWriteResult() {
    struct Full: Error {}
    let fails = Mutex(false)
    let batcher = WriteBatcher<Int>(clock: clock.clock, lead: WriteBatcher<Int>.inPlace, flushesAtExit: false) { _ in
      if fails.withLock({ $0 }) { throw Full() }
    }
    let results = WriteLog<Bool>()
    batcher.schedule(1) { results.append((try? $0.get()) != nil) }
    fails.withLock { $0 = true }
    batcher.schedule(2) { results.append((try? $0.get()) != nil) }
    batcher.schedule(3) { results.append((try? $0.get()) != nil) }
    clock.advance(by: .seconds(1))
    // The first succeeded at once; the superseded one succeeds when superseded; the written
    // one carries the failure.
    #expect(results.all == [true, true, false])
  }

  @Test func flushWritesNowAndReleaseFlushes() throws {
    let batcher = makeBatcher()
    batcher.schedule(1)
    batcher.schedule(2)
    try batcher.flush()
    #expect(log.all == [1, 2])
    do {
      let other = makeBatcher()
      other.schedule(3)
      other.schedule(4)
    }
    #expect(log.all == [1, 2, 3, 4])
  }

  @Test func cancelPendingWriteDropsIt() {
    let batcher = makeBatcher()
    batcher.schedule(1)
    batcher.schedule(2)
    batcher.cancelPendingWrite()
    clock.advance(by: .seconds(1))
    #expect(log.all == [1])
  }
}

@Suite("PendingWrites", .serialized)
struct PendingWritesTests {
  @Test func flushAllRunsRegisteredClosuresUntilCancelled() {
    let count = CountBox()
    let registration = PendingWrites.register { count.increment() }
    PendingWrites.flushAll()
    #expect(count.value == 1)
    registration.cancel()
    PendingWrites.flushAll()
    #expect(count.value == 1)
  }

  @Test func batchersRegisterTheirPendingWrites() {
    let clock = TestWriteClock()
    let log = WriteLog<Int>()
    let batcher = WriteBatcher<Int>(clock: clock.clock) { log.append($0) }
    batcher.schedule(5)
    PendingWrites.flushAll()
    #expect(log.all == [5])
    #expect(!batcher.hasPendingWrite)
  }

  @Test func uninstallingStaysUninstalledWhenAnotherKeyRegisters() {
    let wasAutomatic = PendingWrites.installsExitHandlersAutomatically
    let wasInstalled = PendingWrites.exitHandlersInstalled
    defer {
      PendingWrites.installsExitHandlersAutomatically = wasAutomatic
      if wasInstalled { PendingWrites.installExitHandlers() }
    }
    PendingWrites.installExitHandlers()
    PendingWrites.uninstallExitHandlers()
    let hostHandler = signalHandler(SIGTERM)
    let registration = PendingWrites.register {}
    #expect(!PendingWrites.exitHandlersInstalled)
    #expect(signalHandler(SIGTERM) == hostHandler)
    registration.cancel()
    // Opting back in.
    PendingWrites.installExitHandlers()
    #expect(PendingWrites.exitHandlersInstalled)
    #expect(signalHandler(SIGTERM) != hostHandler)
    PendingWrites.uninstallExitHandlers()
  }

  /// The address of the handler `signal` runs (0 for `SIG_DFL`).
  private func signalHandler(_ signal: Int32) -> Int {
    var action = sigaction()
    _ = sigaction(signal, nil, &action)
    return action.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
  }
}
