import Synchronization

/// Batches frequent saves into one write of the latest value per window.
///
/// The first ``schedule(_:completion:)`` opens a window of ``window`` on the
/// ``WriteClock``; later calls only replace the pending value; when the window closes the
/// latest value is written once. A window of zero writes each value at once. ``writeNow(_:)`` (for `.userInitiated` saves) cancels the
/// pending write and writes before returning. Pending values are flushed by ``flush()``, when
/// the batcher is released, and at process exit and on SIGTERM/SIGINT through
/// ``PendingWrites``.
///
/// Writes never overlap and never go backwards: a value scheduled earlier is never written
/// after a value scheduled later.
///
/// A key that batches uses one batcher per stored value:
///
/// ```swift
/// let batcher = WriteBatcher<Token>(window: .seconds(1), clock: .live) { token in
///   try store.write(JSONEncoder().encode(token))
/// }
/// func save(_ value: Token, context: SaveContext, continuation: SaveContinuation) {
///   switch context {
///   case .didSet:
///     batcher.schedule(value) { continuation.resume(with: $0) }
///   case .userInitiated:
///     continuation.resume(with: Result { try batcher.writeNow(value) })
///   }
/// }
/// ```
public final class WriteBatcher<Value: Sendable>: Sendable {
  /// Receives the outcome of the write that carried (or superseded) a scheduled value.
  public typealias Completion = @Sendable (Result<Void, any Error>) -> Void

  private struct Pending {
    var value: Value
    var sequence: UInt64
    var completion: Completion?
  }

  private struct State {
    var pending: Pending?
    var window: SharedSubscription?
    var windowOpen = false
    var windowID: UInt64 = 0
    var nextSequence: UInt64 = 0
  }

  /// How long a window stays open.
  public let window: Duration
  private let clock: WriteClock
  private let write: @Sendable (Value) throws -> Void
  private let state = Mutex(State())
  /// The sequence number of the last value written; holding it serialises writes.
  private let lastWritten = Mutex<UInt64>(0)
  private let registration = Mutex<PendingWrites.Registration?>(nil)

  /// Creates a batcher.
  ///
  /// - Parameters:
  ///   - window: How long the first change waits for later ones (1 s by default).
  ///   - clock: The clock that closes windows; ``TestWriteClock`` in tests.
  ///   - flushesAtExit: Registers with ``PendingWrites`` so pending values are written at exit
  ///     and on SIGTERM/SIGINT (default `true`).
  ///   - write: Writes one value; runs on the thread that closes the window, flushes or calls
  ///     ``writeNow(_:)``, never twice at once.
  public init(
    window: Duration = .seconds(1),
    clock: WriteClock = .live,
    flushesAtExit: Bool = true,
    write: @escaping @Sendable (Value) throws -> Void
  ) {
    self.window = window
    self.clock = clock
    self.write = write
    if flushesAtExit {
      let token = PendingWrites.register { [weak self] in self?.flushReportingToCompletions() }
      registration.withLock { $0 = token }
    }
  }

  deinit {
    flushReportingToCompletions()
  }

  /// Whether a value waits for its window to close.
  public var hasPendingWrite: Bool { state.withLock { $0.pending != nil } }

  /// Schedules `value` for the current window, opening one if none is open.
  ///
  /// - Parameters:
  ///   - value: The latest value; it replaces any pending one.
  ///   - completion: Called once: with the result of the write that stores this value, or
  ///     with success as soon as a later value supersedes it (the later one carries it).
  public func schedule(_ value: Value, completion: Completion? = nil) {
    // No window: written now, in its place in write order.
    guard window > .zero else {
      let write = claimWriteNow(value)
      let result = Result { try write() }
      completion?(result)
      return
    }
    let (superseded, windowID, needsWindow) = state.withLock {
      state -> (Completion?, UInt64, Bool) in
      state.nextSequence += 1
      let superseded = state.pending?.completion
      state.pending = Pending(value: value, sequence: state.nextSequence, completion: completion)
      guard !state.windowOpen else { return (superseded, state.windowID, false) }
      state.windowOpen = true
      state.windowID += 1
      return (superseded, state.windowID, true)
    }
    // The superseded value will never be written on its own: the later one carries it.
    superseded?(.success(()))
    guard needsWindow else { return }
    let subscription = clock.schedule(window) { [weak self] in self?.windowClosed(windowID) }
    let stale: SharedSubscription? = state.withLock { state in
      guard state.windowID == windowID, state.windowOpen else { return subscription }
      state.window = subscription
      return nil
    }
    stale?.cancel()
  }

  /// Cancels any pending write and writes `value` before returning.
  ///
  /// - Throws: The error of `write`; completions of the superseded pending value receive it too.
  public func writeNow(_ value: Value) throws {
    try claimWriteNow(value)()
  }

  /// The first half of ``writeNow(_:)``, for a key that writes on another thread: cancels the
  /// pending write and gives `value` its place in write order at once, and returns the write
  /// itself. A value scheduled after this call is newer: it stays pending and is never replaced
  /// by `value`.
  public func claimWriteNow(_ value: Value) -> @Sendable () throws -> Void {
    let (sequence, superseded, window) = state.withLock { state in
      state.nextSequence += 1
      let superseded = state.pending
      let window = state.window
      state.pending = nil
      state.window = nil
      state.windowOpen = false
      return (state.nextSequence, superseded, window)
    }
    window?.cancel()
    return { [self] in
      let result = perform(value, sequence: sequence)
      superseded?.completion?(result)
      try result.get()
    }
  }

  /// Writes the pending value now, if any.
  ///
  /// - Throws: The error of `write`; the pending completions receive it too.
  public func flush() throws {
    try flushReportingToCompletions().get()
  }

  /// Drops the pending value without writing it (for example when a newer value arrived from
  /// outside the process).
  ///
  /// - Parameter result: What the dropped value's completion receives.
  public func cancelPendingWrite(
    completingWith result: Result<Void, any Error> = .failure(CancellationError())
  ) {
    let (pending, window) = takePending()
    window?.cancel()
    pending?.completion?(result)
  }

  @discardableResult
  private func flushReportingToCompletions() -> Result<Void, any Error> {
    let (pending, window) = takePending()
    window?.cancel()
    guard let pending else { return .success(()) }
    let result = perform(pending.value, sequence: pending.sequence)
    pending.completion?(result)
    return result
  }

  private func windowClosed(_ id: UInt64) {
    let pending: Pending? = state.withLock { state in
      guard state.windowID == id, state.windowOpen else { return nil }
      state.window = nil
      state.windowOpen = false
      defer { state.pending = nil }
      return state.pending
    }
    guard let pending else { return }
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

/// An error of a write that stored the value all the same (the file was replaced, only its
/// folder could not be synced). The batcher counts such a value as written, so that an older
/// value still on its way never replaces it.
protocol StoredDespiteError: Error {
  var valueIsStored: Bool { get }
}
