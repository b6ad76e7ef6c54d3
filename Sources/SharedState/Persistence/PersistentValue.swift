import Dispatch
import Foundation
import Synchronization
import SystemCalls

/// The machinery every persistent key shares, over a ``PersistentStore``: batched writes, no
/// echo of the key's own writes, undecodable contents kept before they are overwritten, pending
/// writes flushed at exit, and a watch that starts again once the store can be reached.
///
/// A key holds one and gets its three requirements from it by conforming to ``PersistentKey``;
/// ``SharedReaderKey/fileStorage(_:decoder:encoder:writeWindow:)`` and `.appStorage` are such keys
/// (see ``PersistentKey`` for one of your own); `Secrets`' `.secret` holds one directly.
///
/// The rules, the same for every key:
/// - **Loading.** Nothing stored → the declared default, no error. A store that fails, or
///   contents that do not decode, → the error in `loadError`, the value kept. The first load
///   runs where the first handle is declared; an explicit load reads on the calling thread
///   (`load()` calls it off the cooperative pool), in turn with the reads that changes cause,
///   and has finished when the key's `load` returns. A successful `load()` replaces a change
///   still waiting for its write: the user asked for what is stored.
/// - **Saving.** ``SaveContext/didSet`` saves are batched: a change that finds no window open
///   is written at once (on a dispatch thread; in place for a store in memory) and opens one;
///   the changes within it are written together, as the latest value, when it closes, and the
///   window after that write gathers the next ones; a window that closes with nothing ends the
///   batch. No stretch of one window holds more than two writes. A failed write is tried once
///   more in the next window, then reported in `saveError`; the value is never rolled back.
///   ``SaveContext/userInitiated`` takes its place in write order at once and is written
///   before `save()` returns. Encoding to nil (an optional holding nothing) deletes.
/// - **Undecodable contents** are never overwritten silently: before the first write over them
///   they go to ``PersistentStore/keepCopy(of:stamp:)``.
/// - **Changes made elsewhere** are read when the store says so; the key's own writes are
///   recognised and never come back as changes. **While a local value has not reached the
///   store, it wins**: a change made elsewhere meanwhile is not shown, and the local value
///   overwrites it when it is written. A value read while the handle was mutated is not applied,
///   so no mutation made in this process is lost to what the store reads back. One read answers
///   every change notice that arrives before it starts.
/// - **Pending writes** are flushed when the last handle goes, at normal exit and on
///   SIGTERM/SIGINT (``PendingWrites``).
public final class PersistentValue<Store: PersistentStore, Value: Sendable>: Sendable {
  /// The store this value lives in.
  public let store: Store
  private let decode: @Sendable (Store.Stored) throws -> Value
  private let encode: @Sendable (Value) throws -> Store.Stored?
  private let known = KnownContents<Store.Stored>()
  private let batcher: WriteBatcher<Value>
  private let watch: StoreWatch
  private let reportIssue: @Sendable (String) -> Void
  /// Reads after change notices and explicit loads run one at a time, in order, so an older
  /// read never lands last.
  private let reads = DispatchQueue(label: "SharedState.PersistentValue.reads")
  /// Set when the last handle went: the flush then made is the last try of a failed write.
  private let handlesGone = Flag()
  /// The thread running a read in turn, so that a load asked for from within one (by an
  /// observer of the change it pushes) runs at once instead of waiting for itself. (A dispatch
  /// queue-specific value would say it too, but libdispatch on Linux corrupts its caches when
  /// such a queue is disposed while threads come and go.)
  private let readingThread = Mutex<ObjectIdentifier?>(nil)
  /// A read for change notices waits in `reads` and has not started.
  private let refreshQueued = Mutex(false)
  /// How many change notices arrived (tests wait for one, then ``settle()``).
  let noticeCount = Atomic<Int>(0)

  /// - Parameters:
  ///   - store: Where the value lives.
  ///   - window: How long the changes after a write are gathered before the next (1 s by
  ///     default); `.zero` writes every change at once, on the thread that made it.
  ///   - decode: Turns stored contents into a value; the error it throws is what `loadError`
  ///     shows, so make it name the store and say what to do.
  ///   - encode: Turns a value into stored contents; nil deletes.
  ///   - environment: The clock, the issue reporter and whether pending writes register with
  ///     ``PendingWrites``; the current one by default.
  public init(
    store: Store, window: Duration = .seconds(1),
    decode: @escaping @Sendable (Store.Stored) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Store.Stored?,
    environment: SharedEnvironment = .current
  ) {
    self.store = store
    self.decode = decode
    self.encode = encode
    reportIssue = environment.reportIssue
    let known = known
    batcher = WriteBatcher(
      window: window, clock: environment.writeClock,
      lead: store.isInMemory ? WriteBatcher<Value>.inPlace : WriteBatcher<Value>.onDispatchThread,
      flushesAtExit: environment.flushesPendingWritesAtExit
    ) { value in
      try Self.write(value, to: store, known: known, decode: decode, encode: encode)
    }
    watch = StoreWatch(store: store, reportIssue: environment.reportIssue)
  }

  // MARK: The key's requirements

  /// ``SharedReaderKey/load(context:continuation:)``: reads the store on the calling thread and
  /// resumes before returning. An explicit load (`.userInitiated`) waits its turn with the reads
  /// that change notices cause, so an older read never lands after it.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    switch context {
    case .initialValue: continuation.resume(with: read())
    case .userInitiated: continuation.resume(with: inReadOrder { read() })
    }
  }

  /// Runs `body` in turn with the reads of change notices (at once if this is one of them).
  private func inReadOrder<T>(_ body: () -> T) -> T {
    let thread = ObjectIdentifier(Thread.current)
    if readingThread.withLock({ $0 == thread }) { return body() }
    return reads.sync { inTurn(body) }
  }

  /// Runs `body` on the reads queue, marked as the read in turn.
  private func inTurn<T>(_ body: () -> T) -> T {
    readingThread.withLock { $0 = ObjectIdentifier(Thread.current) }
    defer { readingThread.withLock { $0 = nil } }
    return body()
  }

  /// ``SharedReaderKey/subscribe(context:subscriber:)``: watches the store; cancelling flushes a
  /// pending write.
  public func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    handlesGone.set(false)
    let generation = watch.begin { [weak self] in self?.changeNoticed(subscriber) }
    return SharedSubscription { [watch, batcher, store, reportIssue, handlesGone] in
      watch.end(generation)
      // The flush below is the last try: a failure is reported, not tried again.
      handlesGone.set(true)
      let flush: @Sendable () -> Void = {
        do { try batcher.flush() } catch {
          reportIssue("The last value for \(store) could not be written when its last handle went away: \(error)")
        }
      }
      // A write may block (a provider frozen, a slow disk): not on the thread that let go.
      if store.isInMemory { flush() } else { DispatchQueue.global().async(execute: flush) }
    }
  }

  /// Reads the store after a change notice, in turn with other reads; one read answers every
  /// notice that arrives before it starts. In memory, before returning.
  private func changeNoticed(_ subscriber: SharedSubscriber<Value>) {
    noticeCount.add(1, ordering: .relaxed)
    guard !store.isInMemory else { return inReadOrder { refresh(subscriber) } }
    guard
      !refreshQueued.withLock({ queued in
        defer { queued = true }
        return queued
      })
    else { return }
    reads.async { [self] in
      refreshQueued.withLock { $0 = false }
      inTurn { refresh(subscriber) }
    }
  }

  /// Waits until every read queued so far has been made (for tests that need a notice handled).
  func settle() { reads.sync {} }

  /// ``SharedKey/save(_:context:continuation:)``.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    switch context {
    case .didSet:
      scheduleWrite(value, continuation)
    case .userInitiated:
      // The write takes its place now, so a mutation made after `save()` began stays pending
      // and is written after this value, never dropped in its favour. A change being written
      // at once with the same contents (`save()` right after it) is waited for, not repeated.
      // Encoded only when such a write is under way: most saves find none.
      let write = batcher.claimWriteNow(value) { [encode] leading in
        guard let mine = try? encode(value), let theirs = try? encode(leading) else { return false }
        return mine == theirs
      }
      DispatchQueue.global().async { [self] in
        let result = Result { try write() }
        reachedStore(result)
        continuation.resume(with: result)
      }
    }
  }

  /// Writes a value waiting in its window now.
  public func flush() throws { try batcher.flush() }

  /// Whether a value waits for its window to close.
  public var hasPendingWrite: Bool { batcher.hasPendingWrite }

  // MARK: Reading

  /// Reads the store. Contents read successfully are the newest: a change still waiting in the
  /// window is dropped (its save counts as done).
  private func read() -> Result<Value?, any Error> {
    let result = Result { try store.read() }.flatMap(interpret)
    reachedStore(result)
    if case .success = result { batcher.cancelPendingWrite(completingWith: .success(())) }
    return result
  }

  private func refresh(_ subscriber: SharedSubscriber<Value>) {
    // While a local value has not reached the store (a mutation not yet handed over, a value
    // waiting for its write, a write under way), it is the newer one: it will overwrite the
    // store. A read during which a write began may predate that write; and what it found is
    // applied only if the value was not mutated meanwhile.
    guard let mark = subscriber.localMark() else { return }
    let writes = known.writesBegun
    guard !batcher.hasPendingWrite, !known.isWriting else { return }
    let read = Result { try store.read() }
    guard known.writesBegun == writes, !batcher.hasPendingWrite else {
      store.readDiscarded()
      return
    }
    reachedStore(read)
    switch read {
    case .failure(let error): subscriber.yield(throwing: error)
    case .success(let stored):
      guard known.isNews(stored, noWriteBegunSince: writes) else { return }
      subscriber.yield(with: interpret(stored), unlessChangedSince: mark)
    }
  }

  private func interpret(_ stored: Store.Stored?) -> Result<Value?, any Error> {
    known.replace(with: stored)
    guard let stored else { return .success(nil) }
    do {
      return .success(try decode(stored))
    } catch {
      known.keepForCopy(stored)
      return .failure(error)
    }
  }

  // MARK: Writing

  /// Batches the write; a failed write is tried once more in the next window before the
  /// failure reaches `saveError`.
  private func scheduleWrite(_ value: Value, _ continuation: SaveContinuation) {
    let schedule = store.writesFirstChangeAtOnce ? batcher.schedule : batcher.scheduleInNextWindow
    schedule(value) { [weak self] result in
      guard let self, case .failure = result, !batcher.hasPendingWrite, !handlesGone.isSet
      else {
        self?.reachedStore(result)
        return continuation.resume(with: result)
      }
      batcher.scheduleInNextWindow(value) { [weak self] result in
        self?.reachedStore(result)
        continuation.resume(with: result)
      }
    }
  }

  private static func write(
    _ value: Value, to store: Store, known: KnownContents<Store.Stored>,
    decode: @Sendable (Store.Stored) throws -> Value, encode: @Sendable (Value) throws -> Store.Stored?
  ) throws {
    let stored = try encode(value)
    try keepUndecodable(in: store, known: known, decode: decode)
    // Known before it is written, so the change notice of this very write is not news.
    let previous = known.beginWrite(stored)
    do {
      if let stored { try store.write(stored) } else { try store.delete() }
      known.endWrite()
    } catch {
      if (error as? any StoredDespiteError)?.valueIsStored == true {
        known.endWrite()
      } else {
        known.failWrite(restoring: previous)
      }
      throw error
    }
  }

  /// Keeps a copy of undecodable contents before they are overwritten: those in the store now
  /// when the store is read before writing, else those the last read found.
  private static func keepUndecodable(
    in store: Store, known: KnownContents<Store.Stored>, decode: @Sendable (Store.Stored) throws -> Value
  ) throws {
    let undecodable: Store.Stored?
    if store.readsBeforeWriting {
      undecodable = try store.read().flatMap { (try? decode($0)) == nil ? $0 : nil }
    } else {
      undecodable = known.awaitingCopy
    }
    guard let undecodable else { return }
    try store.keepCopy(of: undecodable, stamp: Self.stamp())
    known.copyKept()
  }

  /// After a call that reached the store, a watch that could not start is tried again.
  private func reachedStore<T>(_ result: Result<T, any Error>) {
    if case .success = result { watch.retryIfNeeded() }
  }

  /// A UTC time that tells kept copies apart: `20261130T081500.123Z`.
  static func stamp() -> String {
    let now = WallClock.preciseSeconds
    let whole = Int64(now.rounded(.down))
    let milliseconds = Int((now - Double(whole)) * 1000)
    let time = UTCTime(secondsSince1970: whole)?.compact ?? String(whole)
    return time + "." + String(repeating: "0", count: 3 - String(milliseconds).count) + String(milliseconds) + "Z"
  }
}

/// A flag that closures can hold.
private final class Flag: Sendable {
  private let value = Atomic<Bool>(false)
  var isSet: Bool { value.load(ordering: .acquiring) }
  func set(_ newValue: Bool) { value.store(newValue, ordering: .releasing) }
}
