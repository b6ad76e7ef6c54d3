import Dispatch
import Synchronization

/// Batches frequent saves: the first change is written at once, the ones that follow within
/// ``window`` become one write of the latest value when the window closes.
///
/// A change that finds no window open is written at once (through `lead`: on a utility dispatch
/// thread by default) and opens a window on the ``WriteClock``; changes
/// made while it is open only replace the pending value. When the window closes, the pending
/// value is written and another window opens after that write; a window that closes with
/// nothing pending ends the batch, and the next change is written at once again. So a single
/// change is stored without waiting, and a stream of changes costs at most two writes in any
/// stretch of one window. A window of zero writes each value at once, on the caller's thread.
/// ``writeNow(_:)`` (for `.userInitiated` saves) cancels the pending write and the window and
/// writes before returning; a claimed write of the very value a first write is carrying waits
/// for that write instead of making a second one (a `save()` right after a change). Pending
/// values are flushed by ``flush()``, when the batcher is released, and at process exit and on
/// SIGTERM/SIGINT through ``PendingWrites``.
///
/// Writes never overlap and never go backwards: a value scheduled earlier is never written
/// after a value scheduled later.
///
/// ``PersistentValue`` holds one per stored value; a key author uses that.
package final class WriteBatcher<Value: Sendable>: Sendable {
  /// Receives the outcome of the write that carried (or superseded) a scheduled value.
  package typealias Completion = @Sendable (Result<Void, any Error>) -> Void

  private struct Pending {
    var value: Value
    var sequence: UInt64
    var completion: Completion?
    /// Explicit writes of this value waiting for its write (for a change written at once).
    var waiters: LeadWaiters?
  }

  private struct State {
    var pending: Pending?
    /// A change being written at once on a dispatch thread: a flush writes it too, so that
    /// exit does not outrun it.
    var leading: Pending?
    var window: SharedSubscription?
    var windowOpen = false
    var windowID: UInt64 = 0
    var nextSequence: UInt64 = 0
  }

  /// What a scheduled value does.
  private enum Schedule {
    /// Written now; it opens the window with this id.
    case leads(sequence: UInt64, windowID: UInt64, waiters: LeadWaiters)
    /// Waits for the open window, replacing the value whose completion is given.
    case waits(superseded: Completion?)
  }

  /// Runs the write of a change that opens a window.
  package typealias Lead = @Sendable (_ write: @escaping @Sendable () -> Void) -> Void

  /// Writes on a utility dispatch thread: the caller of `withLock` never waits for a store.
  package static var onDispatchThread: Lead { { DispatchQueue.global(qos: .utility).async(execute: $0) } }

  /// Writes on the caller's thread (for stores in memory, so that tests see writes at once).
  package static var inPlace: Lead { { $0() } }

  /// How long a window stays open.
  package let window: Duration
  private let clock: WriteClock
  private let lead: Lead
  private let write: @Sendable (Value) throws -> Void
  private let state = Mutex(State())
  /// The sequence number of the last value written; holding it serialises writes.
  private let lastWritten = Mutex<UInt64>(0)
  private let registration = Mutex<PendingWrites.Registration?>(nil)

  /// Creates a batcher.
  ///
  /// - Parameters:
  ///   - window: How long changes after a write are gathered into the next one (1 s by default).
  ///   - clock: The clock that closes windows; ``TestWriteClock`` in tests.
  ///   - lead: Runs the write of a change that opens a window: ``onDispatchThread`` by default,
  ///     ``inPlace`` for stores in memory.
  ///   - flushesAtExit: Registers with ``PendingWrites`` so pending values are written at exit
  ///     and on SIGTERM/SIGINT (default `true`).
  ///   - write: Writes one value; runs on the thread that writes a change at once, closes a
  ///     window, flushes or calls ``writeNow(_:)``, never twice at once.
  package init(
    window: Duration = .seconds(1),
    clock: WriteClock = .live,
    lead: @escaping Lead = onDispatchThread,
    flushesAtExit: Bool = true,
    write: @escaping @Sendable (Value) throws -> Void
  ) {
    self.window = window
    self.clock = clock
    self.lead = lead
    self.write = write
    if flushesAtExit {
      let token = PendingWrites.register { [weak self] in self?.flushReportingToCompletions() }
      registration.withLock { $0 = token }
    }
  }

  deinit {
    flushReportingToCompletions()
  }

  /// Whether a value waits for its window to close, or for its thread to write it at once.
  package var hasPendingWrite: Bool { state.withLock { $0.pending != nil || $0.leading != nil } }

  /// Writes `value` now if no window is open (and opens one), else keeps it for the open
  /// window's end.
  ///
  /// - Parameters:
  ///   - value: The latest value; it replaces any pending one.
  ///   - completion: Called once: with the result of the write that stores this value, or
  ///     with success as soon as a later value supersedes it (the later one carries it).
  package func schedule(_ value: Value, completion: Completion? = nil) {
    guard window > .zero else {
      let write = claimWriteNow(value)
      completion?(Result { try write() })
      return
    }
    let next = state.withLock { state -> Schedule in
      state.nextSequence += 1
      guard !state.windowOpen else {
        defer { state.pending = Pending(value: value, sequence: state.nextSequence, completion: completion) }
        return .waits(superseded: state.pending?.completion)
      }
      state.windowOpen = true
      state.windowID += 1
      let waiters = LeadWaiters()
      state.leading = Pending(value: value, sequence: state.nextSequence, waiters: waiters)
      return .leads(sequence: state.nextSequence, windowID: state.windowID, waiters: waiters)
    }
    switch next {
    case .waits(let superseded):
      // The superseded value will never be written on its own: the later one carries it.
      superseded?(.success(()))
    case .leads(let sequence, let windowID, let waiters):
      openWindow(windowID)
      lead { [self] in
        let result = perform(value, sequence: sequence)
        state.withLock { state in
          if state.leading?.sequence == sequence { state.leading = nil }
        }
        waiters.deliver(result)
        completion?(result)
      }
    }
  }

  /// Keeps `value` for the end of the open window, or of a window opened now: never written at
  /// once, unless the window is zero (a failed write is tried again this way).
  package func scheduleInNextWindow(_ value: Value, completion: Completion? = nil) {
    guard window > .zero else { return schedule(value, completion: completion) }
    let (superseded, newWindow) = state.withLock { state -> (Completion?, UInt64?) in
      state.nextSequence += 1
      let superseded = state.pending?.completion
      state.pending = Pending(value: value, sequence: state.nextSequence, completion: completion)
      guard !state.windowOpen else { return (superseded, nil) }
      state.windowOpen = true
      state.windowID += 1
      return (superseded, state.windowID)
    }
    superseded?(.success(()))
    if let newWindow { openWindow(newWindow) }
  }

  /// Cancels any pending write and the open window, and writes `value` before returning.
  ///
  /// - Throws: The error of `write`; completions of the superseded pending value receive it too.
  package func writeNow(_ value: Value) throws {
    try claimWriteNow(value)()
  }

  /// The first half of ``writeNow(_:)``, for a key that writes on another thread: cancels the
  /// pending write and the window and gives `value` its place in write order at once, and
  /// returns the write itself. A value scheduled after this call is newer: it is never replaced
  /// by `value`.
  ///
  /// - Parameter isLeadingValue: Whether the value a change is being written at once with
  ///   stores the same as `value`. When it does and no later change waits, the returned write
  ///   waits for that write and reports its result instead of writing again: that write ends
  ///   after this call, so the store holds `value` just as if it had been written here.
  package func claimWriteNow(
    _ value: Value, joiningLeadIf isLeadingValue: (Value) -> Bool = { _ in false }
  ) -> @Sendable () throws -> Void {
    let (sequence, superseded, window, joined) = state.withLock { state in
      let superseded = state.pending
      let window = state.window
      // Joined only when nothing was scheduled or claimed since the leading value: a later
      // value may have been written already, and the leading write would then be skipped.
      let leading = state.leading.flatMap { $0.sequence == state.nextSequence ? $0 : nil }
      let joined = superseded == nil && leading.map { isLeadingValue($0.value) } == true ? leading?.waiters : nil
      state.nextSequence += 1
      state.pending = nil
      state.window = nil
      state.windowOpen = false
      return (state.nextSequence, superseded, window, joined)
    }
    window?.cancel()
    if let joined { return { try joined.wait().get() } }
    return { [self] in
      let result = perform(value, sequence: sequence)
      superseded?.completion?(result)
      try result.get()
    }
  }

  /// Writes the pending value now, if any, and closes the window.
  ///
  /// - Throws: The error of `write`; the pending completions receive it too.
  package func flush() throws {
    try flushReportingToCompletions().get()
  }

  /// Drops the pending value without writing it (for example when a newer value arrived from
  /// outside the process), and closes the window.
  ///
  /// - Parameter result: What the dropped value's completion receives.
  package func cancelPendingWrite(
    completingWith result: Result<Void, any Error> = .failure(CancellationError())
  ) {
    let (pending, window) = takePending()
    window?.cancel()
    pending?.completion?(result)
  }

  @discardableResult
  private func flushReportingToCompletions() -> Result<Void, any Error> {
    let leading = state.withLock { $0.leading.take() }
    // Written here unless its own thread got there first (then this is skipped as written).
    let leadResult = leading.map { perform($0.value, sequence: $0.sequence) } ?? .success(())
    leading?.waiters?.deliver(leadResult)
    let (pending, window) = takePending()
    window?.cancel()
    guard let pending else { return leadResult }
    let result = perform(pending.value, sequence: pending.sequence)
    pending.completion?(result)
    return result
  }

  /// Schedules the end of window `id`.
  private func openWindow(_ id: UInt64) {
    let subscription = clock.schedule(window) { [weak self] in self?.windowClosed(id) }
    let stale: SharedSubscription? = state.withLock { state in
      guard state.windowID == id, state.windowOpen else { return subscription }
      state.window = subscription
      return nil
    }
    stale?.cancel()
  }

  /// Writes what the window gathered and opens the next one; a window that gathered nothing
  /// ends the batch.
  private func windowClosed(_ id: UInt64) {
    let next: (Pending, UInt64)? = state.withLock { state in
      guard state.windowID == id, state.windowOpen else { return nil }
      state.window = nil
      guard let pending = state.pending else {
        state.windowOpen = false
        return nil
      }
      state.pending = nil
      state.windowID += 1
      return (pending, state.windowID)
    }
    guard let (pending, nextWindow) = next else { return }
    openWindow(nextWindow)
    let result = perform(pending.value, sequence: pending.sequence)
    pending.completion?(result)
  }

  private func takePending() -> (Pending?, SharedSubscription?) {
    state.withLock { state in
      defer {
        state.pending = nil
        state.window = nil
        state.windowOpen = false
      }
      return (state.pending, state.window)
    }
  }

  private func perform(_ value: Value, sequence: UInt64) -> Result<Void, any Error> {
    lastWritten.withLock { last in
      // A later value was already written by another path: this one is superseded.
      guard sequence > last else { return .success(()) }
      do {
        try write(value)
        last = sequence
        return .success(())
      } catch {
        if (error as? any StoredDespiteError)?.valueIsStored == true { last = sequence }
        return .failure(error)
      }
    }
  }
}

/// The explicit writes waiting for a change's first write, and that write's result once made:
/// whichever of its own thread and a flush makes it first reports to them.
private final class LeadWaiters: Sendable {
  private let result = Mutex<Result<Void, any Error>?>(nil)
  private let made = DispatchSemaphore(value: 0)

  func deliver(_ outcome: Result<Void, any Error>) {
    let first = result.withLock { result in
      guard result == nil else { return false }
      result = outcome
      return true
    }
    // Every waiter takes the signal and gives it back for the next.
    if first { made.signal() }
  }

  func wait() -> Result<Void, any Error> {
    made.wait()
    defer { made.signal() }
    return result.withLock { $0 } ?? .failure(CancellationError())
  }
}

/// An error of a write that stored the value all the same (the file was replaced, only its
/// folder could not be synced). The batcher counts such a value as written, so that an older
/// value still on its way never replaces it.
protocol StoredDespiteError: Error {
  var valueIsStored: Bool { get }
}
