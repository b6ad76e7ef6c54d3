import Dispatch
import Foundation
import SharedState
import Synchronization

/// The machinery of one ``SecretKey``: its storage, its write batcher and what it last knew of
/// the item.
final class SecretKeyCore<Value: Codable & Sendable>: Sendable {
  let address: SecretItemAddress
  private let storage: SecretStorage
  private let item: ItemState
  private let batcher: WriteBatcher<Value>
  private let reportIssue: @Sendable (String) -> Void
  private let watch: ChangeWatch
  /// Reads after change signals and explicit loads run one at a time, in order, so an older
  /// read never lands last.
  private let reads = DispatchQueue(label: "Secrets.SecretKey.reads")
  /// Whether a read for change signals waits in `reads` and has not started: one such read
  /// answers every signal that arrives before it starts (a collection's busy moments, the key's
  /// own writes), so further signals add none.
  private let refreshQueued = Mutex(false)

  init(address: SecretItemAddress, storage: SecretStorage, window: Duration, environment: SharedEnvironment) {
    let item = ItemState()
    self.address = address
    self.storage = storage
    self.item = item
    reportIssue = environment.reportIssue
    batcher = WriteBatcher(
      window: window, clock: environment.writeClock, flushesAtExit: environment.flushesPendingWritesAtExit
    ) { value in
      try Self.write(value, at: address, to: storage, item: item)
    }
    watch = ChangeWatch { [storage] onChange in try storage.watch(address, onChange) }
  }

  /// ``load()`` on the key's read queue, after the reads already queued.
  func loadInTurn(_ completion: @escaping @Sendable (Result<Value?, any Error>) -> Void) {
    reads.async { [self] in completion(load()) }
  }

  /// Reads the item. A value read successfully is the newest: a change still waiting in the
  /// window is dropped (its save counts as done), as `.fileStorage` does.
  func load() -> Result<Value?, any Error> {
    let result = Result { try storage.read(address) }.flatMap(decode)
    reachedProvider(result)
    if case .success = result { batcher.cancelPendingWrite(completingWith: .success(())) }
    return result
  }

  /// Batches the write; a failed write is tried once more in the next window before the
  /// failure reaches `saveError`.
  func scheduleWrite(_ value: Value, _ continuation: SaveContinuation) {
    batcher.schedule(value) { [self] result in
      reachedProvider(result)
      guard case .failure = result, !batcher.hasPendingWrite else { return continuation.resume(with: result) }
      batcher.schedule(value) { [self] result in
        reachedProvider(result)
        continuation.resume(with: result)
      }
    }
  }

  /// Takes `value`'s place in write order now; the returned write runs it (see
  /// `WriteBatcher.claimWriteNow`).
  func claimWriteNow(_ value: Value) -> @Sendable () -> Result<Void, any Error> {
    let write = batcher.claimWriteNow(value)
    return { [self] in
      let result = Result { try write() }
      reachedProvider(result)
      return result
    }
  }

  /// After a call that reached the provider, a watch that could not start is tried again.
  private func reachedProvider<T>(_ result: Result<T, any Error>) {
    if case .success = result { watch.retryIfNeeded() }
  }

  /// Watches the collection; a change is read and, unless it is what this key last wrote or
  /// read, handed to `subscriber`. Cancelling flushes a pending write.
  func subscribe(_ subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    let failure = watch.begin { [weak self] in
      guard let self else { return }
      guard !refreshQueued.withLock({ queued in defer { queued = true }; return queued }) else { return }
      reads.async {
        self.refreshQueued.withLock { $0 = false }
        self.refresh(subscriber)
      }
    }
    if let failure { subscriber.yield(throwing: failure) }
    return SharedSubscription { [watch, batcher, address, reportIssue] in
      watch.end()
      DispatchQueue.global().async {
        do { try batcher.flush() } catch {
          reportIssue("The last value for \(address) could not be written when its last handle went away: \(error)")
        }
      }
    }
  }

  private func refresh(_ subscriber: SharedSubscriber<Value>) {
    // While a local value waits for its write, or is being written, it is the newer one: it
    // will overwrite the item. A read during which a write began may predate that write.
    let writes = item.writesBegun
    guard !batcher.hasPendingWrite, !item.isWriting else { return }
    let read = Result(catching: { try storage.read(address) })
    guard item.writesBegun == writes, !batcher.hasPendingWrite else { return }
    switch read {
    case .failure(let error): subscriber.yield(throwing: error)
    case .success(let bytes):
      guard item.isNews(bytes) else { return }
      subscriber.yield(with: decode(bytes))
    }
  }

  private func decode(_ bytes: [UInt8]?) -> Result<Value?, any Error> {
    item.replaceKnown(with: bytes)
    guard let bytes else { return .success(nil) }
    do {
      return .success(try JSONDecoder().decode(Value.self, from: Data(bytes)))
    } catch {
      item.keepForBackup(bytes)
      return .failure(SecretKeyError.undecodable(address, reason: Self.reason(error)))
    }
  }

  private static func write(_ value: Value, at address: SecretItemAddress, to storage: SecretStorage, item: ItemState) throws {
    let bytes = isNone(value) ? nil : Array(try JSONEncoder().encode(value))
    // Known before it is written, so the change signal of this very write is not news.
    let previous = item.beginWrite(bytes)
    do {
      if let bytes {
        if let undecodable = item.pendingBackup {
          try storage.backup(address, undecodable, Date().ISO8601Format())
          item.backupDone()
        }
        try storage.write(address, bytes)
      } else {
        try storage.delete(address)
      }
      item.endWrite()
    } catch {
      item.failWrite(restoring: previous)
      throw error
    }
  }

  /// Why the bytes did not decode, naming only the declared type's fields: JSONDecoder's own
  /// text quotes the bytes it choked on, and those are the secret.
  private static func reason(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "not JSON of the expected type" }
    func at(_ context: DecodingError.Context) -> String {
      context.codingPath.isEmpty ? "" : " at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
    }
    switch error {
    case .typeMismatch(let type, let context): return "expected \(type)\(at(context))"
    case .valueNotFound(let type, let context): return "missing \(type)\(at(context))"
    case .keyNotFound(let key, let context): return "missing key \(key.stringValue)\(at(context))"
    case .dataCorrupted(let context): return "not valid JSON\(at(context))"
    @unknown default: return "not JSON of the expected type"
    }
  }

  /// Whether `value` is an optional holding nothing: writing it deletes the item.
  private static func isNone(_ value: Value) -> Bool {
    let mirror = Mirror(reflecting: value)
    return mirror.displayStyle == .optional && mirror.children.isEmpty
  }
}

/// What a key knows of its item: the bytes it last wrote or read (so its own writes do not come
/// back as changes), whether a write is under way, and undecodable bytes that must be backed up
/// before they are overwritten.
final class ItemState: Sendable {
  private struct State {
    var known: [UInt8]??
    var writes = 0
    var writesBegun: UInt64 = 0
    var pendingBackup: [UInt8]?
  }

  private let state = Mutex(State())

  /// Whether `bytes` differ from what the key last wrote or read.
  func isNews(_ bytes: [UInt8]?) -> Bool {
    state.withLock { $0.known != .some(bytes) }
  }

  /// Records `bytes` as the item's content. Undecodable bytes read earlier are no longer in the
  /// item once other bytes are: there is nothing left to back up.
  func replaceKnown(with bytes: [UInt8]?) {
    state.withLock { state in
      if state.known != .some(bytes) { state.pendingBackup = nil }
      state.known = .some(bytes)
    }
  }

  /// While a write is under way a read may see the item before or after it: neither is news.
  var isWriting: Bool { state.withLock { $0.writes > 0 } }

  /// How many writes have begun so far.
  var writesBegun: UInt64 { state.withLock { $0.writesBegun } }

  /// Marks a write of `bytes` (`nil`: a delete) as begun; returns what was known before.
  func beginWrite(_ bytes: [UInt8]?) -> [UInt8]?? {
    state.withLock { state in
      state.writes += 1
      state.writesBegun += 1
      defer { state.known = .some(bytes) }
      return state.known
    }
  }

  func endWrite() {
    state.withLock { $0.writes -= 1 }
  }

  /// Marks the write as failed: what was known before is known again.
  func failWrite(restoring previous: [UInt8]??) {
    state.withLock { state in
      state.writes -= 1
      state.known = previous
    }
  }

  func keepForBackup(_ bytes: [UInt8]) {
    state.withLock { $0.pendingBackup = bytes }
  }

  var pendingBackup: [UInt8]? { state.withLock { $0.pendingBackup } }

  func backupDone() {
    state.withLock { $0.pendingBackup = nil }
  }
}
