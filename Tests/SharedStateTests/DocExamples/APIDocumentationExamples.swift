// The examples in SharedState's doc comments, compiled (`DocExamplesTests` checks that each one
// stands here, or in another file of these tests, as it stands in the documentation). What they
// leave to the reader (a user, a view, a store) is declared around them.
import Foundation
import SharedState  // in place of: import Sharing
import Testing

// MARK: Shared

private func favouritesExample(id: Int) async throws {
  @Shared(.inMemory("favourites")) var favourites: Set<Int> = []

  $favourites.withLock { favourites in
    if favourites.contains(id) { favourites.remove(id) } else { favourites.insert(id) }
  }
  try await $favourites.save()  // written now (.userInitiated)
}

private func unwrappingExample() {
  @Shared(.currentUser) var user: User?
  if let user = Shared($user) {
    user.withLock { $0.name = "Blob" }  // writes through to the optional
  }
}

private func readExample(_ handle: Shared<[String]>) {
  @Shared var topics: [String]
  _topics = handle
  let count = $topics.read { $0.count }
  _ = count
}

// MARK: SharedReader

private func readerExample(_ shared: Shared<User>) {
  @Shared var user: User
  _user = shared
  struct Header {
    @SharedReader var user: User
  }
  let header = Header(user: SharedReader($user))  // one way only
  _ = header
}

// MARK: SharedChangeTracker

private func trackerExample() {
  @Shared(value: 0) var count
  let tracker = SharedChangeTracker()
  tracker.track {
    $count.withLock { $0 += 1 }  // the feature under test
  }
  tracker.assert {
    #expect($count != $count)  // 0 recorded, 1 now
    $count.withLock { $0 = 1 }  // the change the test expects
    #expect($count == $count)
  }
}

@Test func theChangeTrackerExampleHoldsTrue() {
  trackerExample()
}

// MARK: Continuations, subscriptions, keys

private struct Token: Codable, Sendable {}

private struct TokenLoader {
  let store: TokenBytes

  func load(context: LoadContext<Token?>, continuation: LoadContinuation<Token?>) {
    do {
      guard let bytes = try store.read() else { return continuation.resumeReturningInitialValue() }
      continuation.resume(returning: try JSONDecoder().decode(Token?.self, from: bytes))
    } catch {
      continuation.resume(throwing: error)
    }
  }
}

private struct TokenBytes {
  func read() throws -> Data? { nil }
}

private struct Watcher {
  func stop() {}
}

private struct Source: Sendable {
  func observe(_ onChange: @escaping @Sendable (Result<Int?, any Error>) -> Void) -> Watcher { Watcher() }
}

private struct WatchingKey {
  let source: Source

  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  ) -> SharedSubscription {
    let watcher = source.observe { result in subscriber.yield(with: result) }
    return SharedSubscription { watcher.stop() }
  }
}

struct LogKey: SharedKey {
  var id: String { "log" }
  func load(context: LoadContext<[String]>, continuation: LoadContinuation<[String]>) {
    continuation.resumeReturningInitialValue()
  }
  func subscribe(
    context: LoadContext<[String]>, subscriber: SharedSubscriber<[String]>
  ) -> SharedSubscription { SharedSubscription {} }
  func save(_ value: [String], context: SaveContext, continuation: SaveContinuation) {
    print(value.last ?? "")
    continuation.resume()
  }
}

struct ClockKey: SharedReaderKey {
  var id: String { "clock" }
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    continuation.resume(returning: 42)
  }
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  ) -> SharedSubscription {
    SharedSubscription {}
  }
}

// MARK: Named keys

extension SharedKey where Self == FileStorageKey<Set<Int>>.Default {
  static var favourites: Self {
    Self[.fileStorage(URL(filePath: "/var/lib/tool/favourites.json")), default: []]
  }
}

private func favouritesKeyExample() {
  @Shared(.favourites) var favourites
  _ = favourites
}

extension SharedKey where Self == InMemoryKey<Int>.Default {
  static var counter: Self { Self[.inMemory("counter"), default: 0] }
}

private func counterKeyExample() {
  @Shared(.counter) var counter
  _ = counter
}

extension SharedKey where Self == FileStorageKey<[Note]>.Default {
  static var notes: Self {
    Self[.fileStorage(URL(filePath: "/home/me/.local/share/tool/notes.json")), default: []]
  }
}

private func notesKeyExample() {
  @Shared(.notes) var notes
  _ = notes
}

struct Session: Sendable {}

extension SharedKey where Self == InMemoryKey<Session?>.Default {
  static var session: Self { Self[.inMemory("session"), default: nil] }
}

private func sessionKeyExample() {
  @Shared(.session) var session
  _ = session
}

private func appStorageExample() {
  @Shared(.appStorage("hasSeenWelcome")) var hasSeenWelcome = false
  _ = hasSeenWelcome
}

// MARK: Environment and tests

@Test func counter() {
  let environment = SharedEnvironment.test()
  environment.withValue {
    @Shared(.inMemory("count")) var count = 0
    $count.withLock { $0 += 1 }
    #expect(count == 1)
  }
}

@Test func anInMemoryFileSystemPlaysAnotherProcess() {
  let files = InMemoryFileSystem()
  SharedEnvironment.test(fileSystem: files).withValue {
    @Shared(.fileStorage(URL(filePath: "/tmp/n.json"))) var n = 0
    files.setContents(Data("7".utf8), atPath: "/tmp/n.json")
    #expect(n == 7)
  }
}

@Test func theWriteClockExampleWritesAsItsCommentsSay() {
  let files = InMemoryFileSystem()
  let clock = TestWriteClock()
  SharedEnvironment.test(fileSystem: files, clock: clock).withValue {
    @Shared(.fileStorage(URL(filePath: "/n.json"))) var n = 0
    $n.withLock { $0 = 1 }  // written at once
    $n.withLock { $0 = 2 }  // waits for the window
    clock.advance(by: .seconds(1))  // written now
  }
  #expect(files.writeCount(atPath: "/n.json") == 2)
  #expect(files.contents(atPath: "/n.json") == Data("2".utf8))
}

struct TokenStore: Sendable {
  static var keyring: TokenStore { TokenStore() }
  static func inMemory() -> TokenStore { TokenStore() }
}

enum TokenStoreKey: SharedEnvironmentKey {
  static var liveValue: TokenStore { .keyring }
  static func testValue() -> TokenStore { .inMemory() }
}
extension SharedEnvironment {
  var tokenStore: TokenStore {
    get { self[TokenStoreKey.self] }
    set { self[TokenStoreKey.self] = newValue }
  }
}

// MARK: Persistence machinery

private struct Outbox: Sendable {
  func sendPending() {}
}

private func pendingWritesExample(outbox: Outbox) {
  let registration = PendingWrites.register { outbox.sendPending() }
  // … on shutdown, explicitly:
  PendingWrites.flushAll()
  registration.cancel()
}

/// The store and key of `PersistentStore`'s and `PersistentKey`'s documentation, over a table
/// that stands for a database.
enum PersistentStoreDocumentation {
  final class Table: Sendable {
    let name = "rows"
    func select(_ key: String) throws -> Data? { nil }
    func upsert(_ key: String, _ bytes: Data) throws {}
    func delete(_ key: String) throws {}
    func observe(_ key: String, _ onChange: @escaping @Sendable () -> Void) -> SharedSubscription? { nil }
  }

  struct RowStore: PersistentStore {
    let table: Table, key: String
    var description: String { "row \(key) of \(table.name)" }
    func read() throws -> Data? { try table.select(key) }
    func write(_ bytes: Data) throws { try table.upsert(key, bytes) }
    func delete() throws { try table.delete(key) }
    func keepCopy(of bytes: Data, stamp: String) throws { try table.upsert("\(key).undecodable-\(stamp)", bytes) }
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
      table.observe(key, onChange)
    }
  }

  struct RowKey<Value: Codable & Sendable>: PersistentKey {
    let persistence: PersistentValue<RowStore, Value>
    init(table: Table, key: String) {
      persistence = PersistentValue(
        store: RowStore(table: table, key: key),
        decode: { try JSONDecoder().decode(Value.self, from: $0) },
        encode: { try JSONEncoder().encode($0) })
    }
    var id: String { persistence.store.key }
  }
}
