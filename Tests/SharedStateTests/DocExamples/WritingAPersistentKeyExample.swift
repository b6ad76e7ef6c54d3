// The key built by "Writing a persistent key" (WritingAPersistentKey.md), as the article writes
// it; `DatabaseRowTable` stands for the reader's real table.
import Foundation
import SharedState
import Synchronization

/// A table of named rows that hold bytes: a database table live, memory in tests.
protocol RowTable: AnyObject, Sendable {
  /// The row's bytes; nil when there is no row.
  func read(_ name: String) throws -> Data?
  /// Replaces the row's bytes, creating the row; nil deletes it.
  func write(_ bytes: Data?, to name: String) throws
  /// Calls `onChange` whenever the row may have changed; nil when it cannot watch yet.
  func observe(
    _ name: String, _ onChange: @escaping @Sendable () -> Void
  ) throws -> SharedSubscription?
}

/// Rows in memory, for tests.
final class InMemoryRowTable: RowTable {
  private struct State {
    var rows: [String: Data] = [:]
    var watchers: [UInt64: (name: String, onChange: @Sendable () -> Void)] = [:]
    var nextWatcher: UInt64 = 0
  }

  private let state = Mutex(State())

  /// Every row that exists.
  var names: [String] { state.withLock { $0.rows.keys.sorted() } }

  func read(_ name: String) -> Data? { state.withLock { $0.rows[name] } }

  func write(_ bytes: Data?, to name: String) {
    let watchers = state.withLock { state in
      state.rows[name] = bytes
      return state.watchers.values.filter { $0.name == name }.map(\.onChange)
    }
    for onChange in watchers { onChange() }
  }

  func observe(
    _ name: String, _ onChange: @escaping @Sendable () -> Void
  ) -> SharedSubscription? {
    let id = state.withLock { state in
      state.nextWatcher += 1
      state.watchers[state.nextWatcher] = (name, onChange)
      return state.nextWatcher
    }
    return SharedSubscription { [weak self] in
      _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
    }
  }
}

/// One row as a persistent store.
struct RowStore: PersistentStore {
  let table: any RowTable
  let name: String

  /// Names the place in the messages the core writes (`loadError`, reported issues).
  var description: String { "row \(name)" }

  func read() throws -> Data? { try table.read(name) }
  func write(_ bytes: Data) throws { try table.write(bytes, to: name) }
  func delete() throws { try table.write(nil, to: name) }

  func keepCopy(of bytes: Data, stamp: String) throws {
    try table.write(bytes, to: "\(name).undecodable-\(stamp)")
  }

  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    try table.observe(name, onChange)
  }

  var isInMemory: Bool { table is InMemoryRowTable }
}

/// A row that holds something other than the JSON of the key's type.
struct UndecodableRow: Error, CustomStringConvertible {
  let name: String
  let reason: String

  var description: String {
    "Row \(name) is not JSON of the expected type (\(reason)). It is left as it is; before "
      + "anything is written over it, it is copied to \(name).undecodable-<time>."
  }
}

/// A `Codable` value kept as JSON in one row.
struct RowKey<Value: Codable & Sendable>: PersistentKey {
  let persistence: PersistentValue<RowStore, Value>

  init(name: String, writeWindow: Duration) {
    let environment = SharedEnvironment.current
    persistence = PersistentValue(
      store: RowStore(table: environment.rowTable, name: name),
      window: writeWindow,
      decode: { bytes in
        do { return try JSONDecoder().decode(Value.self, from: bytes) } catch {
          throw UndecodableRow(name: name, reason: "\(error)")
        }
      },
      encode: { try JSONEncoder().encode($0) },
      environment: environment)
  }

  /// The row's name and its table, and nothing else: every declaration of the row shares one
  /// value, whatever its window.
  struct ID: Hashable {
    let name: String
    let table: ObjectIdentifier
  }

  var id: ID { ID(name: persistence.store.name, table: ObjectIdentifier(persistence.store.table)) }
}

extension SharedReaderKey {
  /// A `Codable` value kept as JSON in the row `name`.
  static func row<Value: Codable & Sendable>(
    _ name: String, writeWindow: Duration = .seconds(1)
  ) -> Self where Self == RowKey<Value> {
    RowKey(name: name, writeWindow: writeWindow)
  }
}

enum RowTableKey: SharedEnvironmentKey {
  static var liveValue: any RowTable { DatabaseRowTable.shared }
  static func testValue() -> any RowTable { InMemoryRowTable() }
}

extension SharedEnvironment {
  /// Where `.row` keys keep their values: the database live, memory in tests.
  var rowTable: any RowTable {
    get { self[RowTableKey.self] }
    set { self[RowTableKey.self] = newValue }
  }
}

/// The reader's real table, here rows in memory behind the live environment.
final class DatabaseRowTable: RowTable {
  static let shared = DatabaseRowTable()
  private let rows = InMemoryRowTable()
  func read(_ name: String) throws -> Data? { rows.read(name) }
  func write(_ bytes: Data?, to name: String) throws { rows.write(bytes, to: name) }
  func observe(_ name: String, _ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    rows.observe(name, onChange)
  }
}
