import Foundation
import Glibc
import Synchronization
import Testing

@testable import SharedState

/// Collects the issues reported through a test environment.
final class IssueLog: Sendable {
  private let messages = Mutex<[String]>([])
  var all: [String] { messages.withLock { $0 } }
  var report: @Sendable (String) -> Void { { [self] message in messages.withLock { $0.append(message) } } }
}

/// A fresh test environment whose issues go to `log`.
func testEnvironment(
  files: InMemoryFileSystem = InMemoryFileSystem(),
  clock: TestWriteClock = TestWriteClock(),
  log: IssueLog = IssueLog()
) -> SharedEnvironment {
  SharedEnvironment.test(fileSystem: files, clock: clock, reportIssue: log.report)
}

struct TestFailure: Error, Equatable {
  var message: String
}

/// The external system behind ``ControlledKey``: tests set what loads return and read what
/// was saved.
final class Backend<Value: Sendable>: Sendable {
  enum Misbehaviour: Sendable {
    case none, resumeTwice, neverResume
  }

  struct State {
    var stored: Value?
    var loadFailure: TestFailure?
    var saveFailure: TestFailure?
    var loads = 0
    var saves: [(value: Value, context: SaveContext)] = []
    var subscribes = 0
    var cancels = 0
    var subscriber: SharedSubscriber<Value>?
    var misbehaviour = Misbehaviour.none
    /// When set, the next save is held: see ``HeldSave``.
    var heldSave: HeldSave?
  }

  let state: Mutex<State>

  init(stored: Value? = nil) {
    state = Mutex(State(stored: stored))
  }

  /// Plays an external change.
  func push(_ result: Result<Value?, any Error>) {
    state.withLock { $0.subscriber }?.yield(with: result)
  }
}

/// A key whose behaviour each test controls through its ``Backend``.
struct ControlledKey<Value: Sendable>: SharedKey {
  let backend: Backend<Value>
  /// When set, explicit loads wait there until the test releases them.
  var heldLoads: HeldLoads? = nil

  struct ID: Hashable, Sendable {
    let backend: ObjectIdentifier
  }

  var id: ID { ID(backend: ObjectIdentifier(backend)) }

  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    let (result, misbehaviour) = backend.state.withLock {
      state -> (Result<Value?, any Error>, Backend<Value>.Misbehaviour) in
      state.loads += 1
      if let failure = state.loadFailure { return (.failure(failure), state.misbehaviour) }
      return (.success(state.stored), state.misbehaviour)
    }
    if case .userInitiated = context, let heldLoads {
      return heldLoads.hold { continuation.resume(with: result) }
    }
    switch misbehaviour {
    case .none:
      continuation.resume(with: result)
    case .resumeTwice:
      continuation.resume(with: result)
      continuation.resume(with: result)
    case .neverResume:
      break
    }
  }

  func subscribe(context: LoadContext<Value>, subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    backend.state.withLock {
      $0.subscribes += 1
      $0.subscriber = subscriber
    }
    return SharedSubscription { [backend] in
      backend.state.withLock {
        $0.cancels += 1
        $0.subscriber = nil
      }
    }
  }

  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    let held = backend.state.withLock { state in
      defer { state.heldSave = nil }
      return state.heldSave
    }
    held?.hold()
    let failure = backend.state.withLock { state -> TestFailure? in
      state.saves.append((value, context))
      if let failure = state.saveFailure { return failure }
      state.stored = value
      return nil
    }
    if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
  }
}

/// Holds one save inside the key, so a test can act while it is in progress: the key waits
/// until ``release()``; ``entered(within:)`` tells the test it got there.
final class HeldSave: Sendable {
  private let enteredSignal = DispatchSemaphore(value: 0)
  private let releaseSignal = DispatchSemaphore(value: 0)

  /// Whether the key entered the held save before `deadline`.
  func entered(within deadline: DispatchTimeInterval = .seconds(10)) -> Bool {
    enteredSignal.wait(timeout: .now() + deadline) == .success
  }

  func release() { releaseSignal.signal() }

  fileprivate func hold() {
    enteredSignal.signal()
    // Bounded, so a test that fails to release does not hang the run.
    _ = releaseSignal.wait(timeout: .now() + .seconds(20))
  }
}

/// Runs `body` on a new thread and tells whether it finished before `deadline` (a body that
/// blocks or deadlocks is left behind, and the test fails instead of hanging).
func finishesOnAnotherThread(
  within deadline: DispatchTimeInterval = .seconds(10), _ body: @escaping @Sendable () -> Void
) -> Bool {
  let finished = DispatchSemaphore(value: 0)
  Thread {
    body()
    finished.signal()
  }.start()
  return finished.wait(timeout: .now() + deadline) == .success
}

/// A file system over an ``InMemoryFileSystem`` that fails the writes a test asks it to fail,
/// and holds change events until ``deliverHeldEvents()``, as inotify delivers them later.
final class FaultyFileSystem: Sendable {
  enum Fault: Sendable {
    /// Nothing is written.
    case beforeReplacing
    /// The file is replaced, then syncing its folder fails.
    case afterReplacing
  }

  let files: InMemoryFileSystem
  private let faults = Mutex<[Fault]>([])
  private let heldEvents = Mutex<[@Sendable () -> Void]>([])

  init(files: InMemoryFileSystem) {
    self.files = files
  }

  /// Makes the next write fail.
  func failNextWrite(_ fault: Fault) {
    faults.withLock { $0.append(fault) }
  }

  /// Delivers the change events held since the last call.
  func deliverHeldEvents() {
    let events = heldEvents.withLock { events in
      defer { events = [] }
      return events
    }
    for event in events { event() }
  }

  /// A test environment on this file system. Each call is a distinct file system (keys of two
  /// environments never share), so make one per test.
  func environment(clock: TestWriteClock, log: IssueLog) -> SharedEnvironment {
    let storage = files.fileStorage
    // The identity of the in-memory file system underneath: notices are handled at once.
    let fileStorage = FileStorage(
      identity: files,
      read: storage.read,
      write: { [self] data, url in
        switch faults.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
        case .beforeReplacing:
          throw TestFailure(message: "disk full")
        case .afterReplacing:
          try storage.write(data, url)
          throw FileStorageError.replacedButNotSynced(path: url.path, reason: "I/O error")
        case nil:
          try storage.write(data, url)
        }
      },
      delete: storage.delete,
      watch: { [self] url, onChange in
        try storage.watch(url) { self.heldEvents.withLock { $0.append(onChange) } }
      })
    return SharedEnvironment(
      inMemoryStorage: InMemoryStorage(), fileStorage: fileStorage, writeClock: clock.clock,
      reportIssue: log.report, flushesPendingWritesAtExit: false)
  }
}

/// Waits for the first element of `stream` that satisfies `predicate`, or `nil` after
/// `timeout`.
func firstValue<Value: Sendable>(
  of stream: AsyncStream<Value>,
  timeout: Duration = .seconds(10),
  where predicate: @escaping @Sendable (Value) -> Bool
) async -> Value? {
  await withTaskGroup(of: Value?.self) { group in
    group.addTask {
      for await value in stream where predicate(value) { return value }
      return nil
    }
    group.addTask {
      try? await Task.sleep(for: timeout)
      return nil
    }
    let first = await group.next() ?? nil
    group.cancelAll()
    return first
  }
}

/// A private folder under the system temporary folder, removed by `remove()`.
struct TemporaryFolder {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appending(component: "SharedStateTests-\(UUID().uuidString)", directoryHint: .isDirectory)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> URL { url.appending(component: name) }

  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// An environment on the real file system with a manual clock.
func fileSystemEnvironment(clock: TestWriteClock = TestWriteClock(), log: IssueLog = IssueLog()) -> SharedEnvironment {
  SharedEnvironment(
    inMemoryStorage: InMemoryStorage(), fileStorage: .fileSystem, writeClock: clock.clock,
    reportIssue: log.report, flushesPendingWritesAtExit: false)
}

/// Explicit loads held inside a ``ControlledKey`` until the test releases them.
final class HeldLoads: Sendable {
  private let loads = Mutex<[@Sendable () -> Void]>([])
  private let held = Atomic<Int>(0)

  /// How many loads were held so far.
  var count: Int { held.load(ordering: .acquiring) }

  fileprivate func hold(_ finish: @escaping @Sendable () -> Void) {
    loads.withLock { $0.append(finish) }
    held.add(1, ordering: .releasing)
  }

  /// Lets every held load finish.
  func releaseAll() {
    let finishing = loads.withLock { loads in
      defer { loads = [] }
      return loads
    }
    for finish in finishing { finish() }
  }
}
