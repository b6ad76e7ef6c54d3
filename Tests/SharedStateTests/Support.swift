import Foundation
import Glibc
import SharedState
import Synchronization
import Testing

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

  struct ID: Hashable, Sendable {
    let backend: ObjectIdentifier
  }

  var id: ID { ID(backend: ObjectIdentifier(backend)) }

  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    let (result, misbehaviour) = backend.state.withLock { state -> (Result<Value?, any Error>, Backend<Value>.Misbehaviour) in
      state.loads += 1
      if let failure = state.loadFailure { return (.failure(failure), state.misbehaviour) }
      return (.success(state.stored), state.misbehaviour)
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
    let failure = backend.state.withLock { state -> TestFailure? in
      state.saves.append((value, context))
      if let failure = state.saveFailure { return failure }
      state.stored = value
      return nil
    }
    if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
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
