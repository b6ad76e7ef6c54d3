// Compile-only: the public API has the shape the design promises. Nothing here runs.
import Foundation
import Observation
import SharedState

private struct Token: Codable, Sendable, Equatable {
  var value: String
}

extension SharedKey where Self == FileStorageKey<[String]>.Default {
  fileprivate static var shapeNotes: Self {
    Self[.fileStorage(URL(filePath: "/tmp/shape-notes.json")), default: []]
  }
}

extension SharedKey where Self == InMemoryKey<Token?>.Default {
  fileprivate static var shapeToken: Self { Self[.inMemory("token"), default: nil] }
}

private struct ShapeKey: SharedKey {
  var id: String { "shape" }
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    _ = context.initialValue
    continuation.resume(returning: 1)
    continuation.resume(throwing: CancellationError())
    continuation.resume(with: .success(nil))
    continuation.resumeReturningInitialValue()
  }
  func subscribe(context: LoadContext<Int>, subscriber: SharedSubscriber<Int>) -> SharedSubscription {
    subscriber.yield(1)
    subscriber.yield(throwing: CancellationError())
    subscriber.yield(with: .success(nil))
    subscriber.yieldReturningInitialValue()
    subscriber.yieldLoading()
    subscriber.yieldLoading(false)
    return SharedSubscription {}
  }
  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    switch context {
    case .didSet: continuation.resume()
    case .userInitiated: continuation.resume(throwing: CancellationError())
    }
    continuation.resume(with: .success(()))
  }
}

private struct ShapeReaderKey: SharedReaderKey {
  var id: String { "reader" }
  func load(context: LoadContext<String>, continuation: LoadContinuation<String>) {}
  func subscribe(context: LoadContext<String>, subscriber: SharedSubscriber<String>) -> SharedSubscription {
    SharedSubscription {}
  }
}

private struct Model {
  @Shared(.shapeNotes) var notes
  @Shared(.shapeToken) var token
  @Shared(.inMemory("count")) var count = 0
  @Shared var injected: Int
  @SharedReader(.shapeNotes) var readNotes
  @SharedReader(ShapeReaderKey()) var external = ""
  @SharedReader var readOnly: Int

  init(count: Shared<Int>) {
    _injected = count
    _readOnly = SharedReader(count)
  }

  func use() async throws {
    $notes.withLock { $0.append("x") }
    let _: Int = $count.withLock {
      $0 += 1
      return $0
    }
    try await $notes.save()
    try await $notes.load()
    _ = ($notes.loadError, $notes.saveError, $notes.isLoading)
    for await _ in $count.values { break }
    let _: Shared<Int> = $injected
    let _: SharedReader<Int> = $readOnly
    try await $readOnly.load()
    _ = ($readOnly.loadError, $readOnly.isLoading, $readOnly.values)
    let _: Shared<Int> = try await Shared(require: ShapeKey())
    let _: SharedReader<String> = try await SharedReader(require: ShapeReaderKey())
    let _ = Shared(value: Token(value: "t")).value
    let _ = Shared(projectedValue: $count)
    _ = withObservationTracking({ count }, onChange: {})
  }
}

private func environmentShape() {
  let files = InMemoryFileSystem()
  let clock = TestWriteClock()
  let environment = SharedEnvironment.test(fileSystem: files, clock: clock)
  environment.withValue { _ = Shared(wrappedValue: 0, .inMemory("x")) }
  _ = SharedEnvironment(
    inMemoryStorage: InMemoryStorage(), fileStorage: .fileSystem, writeClock: .live)
  let _: WriteClock = WriteClock { _, _ in SharedSubscription {} }
  clock.advance(by: .seconds(1))
}

private func flushShape() throws {
  let registration: PendingWrites.Registration = PendingWrites.register {}
  registration.cancel()
  PendingWrites.flushAll()
  PendingWrites.installsExitHandlersAutomatically = false
  PendingWrites.installExitHandlers()
  PendingWrites.uninstallExitHandlers()
}

/// A key author's persistent key: a store of its own under the shared core.
private struct ShapeRowStore: PersistentStore {
  var description: String { "row" }
  func read() throws -> Data? { nil }
  func write(_ stored: Data) throws {}
  func delete() throws {}
  func keepCopy(of stored: Data, stamp: String) throws {}
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? { nil }
  var readsBeforeWriting: Bool { false }
}

private struct ShapeRowKey: PersistentKey {
  typealias Value = Int
  let persistence: PersistentValue<ShapeRowStore, Int>
  init() {
    persistence = PersistentValue(
      store: ShapeRowStore(), window: .milliseconds(10), decode: { _ in 1 }, encode: { _ in Data() })
  }
  var id: String { "row" }
}

private enum ShapeServiceKey: SharedEnvironmentKey {
  static var liveValue: InMemoryStorage { InMemoryStorage() }
  static func testValue() -> InMemoryStorage { InMemoryStorage() }
}

private func persistenceShape(optional: Shared<Int?>, reader: SharedReader<Int?>) async throws {
  @Shared(ShapeRowKey()) var row = 0
  try ShapeRowKey().persistence.flush()
  _ = ShapeRowKey().persistence.hasPendingWrite
  let fileKey: FileStorageKey<Int> = .fileStorage(URL(filePath: "/tmp/p.json"))
  try fileKey.persistence.flush()
  @Shared(.appStorage("flag", store: UserDefaults(suiteName: "shape"))) var flag = false
  @Shared(.appStorage("maybe")) var maybe: String?
  @Shared(.fileStorage(URL(filePath: "/tmp/x.json"), decoder: JSONDecoder(), encoder: JSONEncoder())) var file = [1]
  let coded: FileStorageKey<Int> = .fileStorage(
    URL(filePath: "/tmp/y"), writeWindow: .seconds(2), decode: { _ in 1 }, encode: { _ in Data() })
  @Shared(coded) var custom = 0
  let _: Shared<Int>? = Shared(optional)
  let _: SharedReader<Int>? = SharedReader(optional)
  let _: SharedReader<Int>? = SharedReader(reader)
  let _: SharedReader<Int> = $file.count
  let _: SharedReader<Bool> = $file.read { $0.isEmpty }
  try await $file.load(.fileStorage(URL(filePath: "/tmp/z.json")))
  _ = ($file == $file, Mirror(reflecting: $file), SharedSubscriber<Int>(callback: { _ in }, onLoading: nil))
  let defaults: [DefaultsStore] = [
    .standard, .suite("shape"), .userDefaults(.standard), .inMemory, InMemoryDefaults().store,
  ]
  let environment = SharedEnvironment.test(defaults: InMemoryDefaults())
  _ = (defaults, environment.defaults, environment.isTest, environment[ShapeServiceKey.self])
  _ = SharedKeyDefault<InMemoryKey<Int>>[.inMemory("n"), default: 1].initialValue
}

/// What code written for swift-sharing uses beyond the basics: moving handles that are
/// constants, named keys given a value, descriptions, and the change tracker.
private func swiftSharingShape(handle: Shared<Int>, reader: SharedReader<Int>) async throws {
  try await handle.load(.inMemory("other"))
  try await reader.load(.inMemory("other"))
  handle.projectedValue = Shared(value: 2)
  reader.projectedValue = SharedReader(value: 2)
  @Shared(.shapeToken) var token = Token(value: "given")
  _ = (handle.description, reader.description, token)
  let tracker = SharedChangeTracker(reportUnassertedChanges: false)
  tracker.track { handle.withLock { $0 += 1 } }
  let asserted: Bool = tracker.assert { handle == handle }
  _ = (asserted, tracker.hasChanges, tracker == SharedChangeTracker(), Set([tracker]))
  tracker.reset()
}
