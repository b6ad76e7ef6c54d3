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
    WriteBatcher(window: window, clock: clock.clock, flushesAtExit: false) { [log] in log.append($0) }
  }

  @Test func oneWriteOfTheLatestValuePerWindow() {
    let batcher = makeBatcher()
    for value in 1...100 { batcher.schedule(value) }
    #expect(log.all.isEmpty)
    #expect(batcher.hasPendingWrite)
    clock.advance(by: .seconds(1))
    #expect(log.all == [100])
    batcher.schedule(101)
    clock.advance(by: .milliseconds(500))
    batcher.schedule(102)
    clock.advance(by: .milliseconds(500))
    #expect(log.all == [100, 102])
  }

  @Test func writeNowCancelsThePendingWrite() throws {
    let batcher = makeBatcher()
    batcher.schedule(1)
    try batcher.writeNow(2)
    #expect(log.all == [2])
    clock.advance(by: .seconds(1))
    #expect(log.all == [2])
    #expect(clock.scheduledCount == 0)
  }

  @Test func aValueScheduledAfterAClaimedWriteStaysPendingAndIsWrittenLast() throws {
    let batcher = makeBatcher()
    batcher.schedule(1)
    let write = batcher.claimWriteNow(2)
    let completions = WriteLog<Bool>()
    batcher.schedule(3) { completions.append((try? $0.get()) != nil) }
    try write()
    #expect(log.all == [2])
    #expect(batcher.hasPendingWrite)
    #expect(completions.all.isEmpty, "the newer value was carried by an older write")
    clock.advance(by: .seconds(1))
    #expect(log.all == [2, 3])
    #expect(completions.all == [true])
  }

  @Test func aValueStoredDespiteAnErrorIsNeverReplacedByAnOlderOne() throws {
    let written = WriteLog<Int>()
    let batcher = WriteBatcher<Int>(clock: clock.clock, flushesAtExit: false) { value in
      written.append(value)
      if value == 2 { throw FileStorageError.replacedButNotSynced(path: "/tmp/x", reason: "I/O error") }
    }
    let older = batcher.claimWriteNow(1)
    batcher.schedule(2)
    clock.advance(by: .seconds(1))
    try older()
    #expect(written.all == [2], "the older value replaced the stored one")
  }

  @Test func completionsReceiveTheWriteResult() {
    struct Full: Error {}
    let fails = Mutex(true)
    let batcher = WriteBatcher<Int>(clock: clock.clock, flushesAtExit: false) { _ in
      if fails.withLock({ $0 }) { throw Full() }
    }
    let results = WriteLog<Bool>()
    batcher.schedule(1) { results.append((try? $0.get()) != nil) }
    batcher.schedule(2) { results.append((try? $0.get()) != nil) }
    clock.advance(by: .seconds(1))
    // The superseded value succeeds at once; the written one carries the failure.
    #expect(results.all == [true, false])
  }

  @Test func flushWritesNowAndReleaseFlushes() throws {
    let batcher = makeBatcher()
    batcher.schedule(1)
    try batcher.flush()
    #expect(log.all == [1])
    do {
      let other = makeBatcher()
      other.schedule(2)
    }
    #expect(log.all == [1, 2])
  }

  @Test func cancelPendingWriteDropsIt() {
    let batcher = makeBatcher()
    batcher.schedule(1)
    batcher.cancelPendingWrite()
    clock.advance(by: .seconds(1))
    #expect(log.all.isEmpty)
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
