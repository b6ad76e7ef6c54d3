import Synchronization
import SystemCalls

/// The storage, clock and issue reporter the keys use, injectable per task.
///
/// Keys capture the environment current when they are created (`.inMemory(_:)`,
/// `.fileStorage(_:)`, `.appStorage(_:)`, and keys of other modules such as `Secrets`'
/// `.secret`, which keep their storage here through ``SharedEnvironmentKey``), so a test that
/// runs its body inside `withValue(_:)` gets empty storage for every key, an in-memory file
/// system, in-memory defaults and a manual write clock, and never touches the real home folder
/// or a keyring.
///
/// ```swift
/// @Test func counter() {
///   let environment = SharedEnvironment.test()
///   environment.withValue {
///     @Shared(.inMemory("count")) var count = 0
///     $count.withLock { $0 += 1 }
///     #expect(count == 1)
///   }
/// }
/// ```
public struct SharedEnvironment: Sendable {
  /// Where `.inMemory(_:)` keys keep their values.
  public var inMemoryStorage: InMemoryStorage
  /// The file system behind `.fileStorage(_:)` keys.
  public var fileStorage: FileStorage
  /// The defaults behind `.appStorage(_:)` keys.
  public var defaults: DefaultsStore
  /// The clock that closes the write windows of persistent keys (`.fileStorage(_:)`, and
  /// keys of other modules such as `.secret`).
  public var writeClock: WriteClock
  /// Receives programming errors (a continuation resumed twice or never, a type mismatch).
  public var reportIssue: @Sendable (String) -> Void
  /// Whether the batches of persistent keys (`.fileStorage(_:)`, `.secret`, …) register with
  /// ``PendingWrites`` (flushed at exit, on SIGTERM/SIGINT and by ``PendingWrites/flushAll()``).
  /// `true` live, `false` in ``test(fileSystem:defaults:clock:reportIssue:)`` so tests never
  /// install signal handlers and never flush each other's windows.
  public var flushesPendingWritesAtExit: Bool
  /// Whether values of other modules (``SharedEnvironmentKey``) take their test value.
  public let isTest: Bool
  /// Values of other modules, made on first use.
  private var values: ExtraValues

  /// Creates an environment.
  public init(
    inMemoryStorage: InMemoryStorage,
    fileStorage: FileStorage,
    defaults: DefaultsStore = .standard,
    writeClock: WriteClock,
    reportIssue: @escaping @Sendable (String) -> Void = SharedEnvironment.printIssue,
    flushesPendingWritesAtExit: Bool = true,
    isTest: Bool = false
  ) {
    self.inMemoryStorage = inMemoryStorage
    self.fileStorage = fileStorage
    self.defaults = defaults
    self.writeClock = writeClock
    self.reportIssue = reportIssue
    self.flushesPendingWritesAtExit = flushesPendingWritesAtExit
    self.isTest = isTest
    self.values = ExtraValues()
  }

  /// The process-wide environment: one in-memory store, the real file system, the standard
  /// defaults, the continuous clock, issues printed to standard error.
  public static let live = SharedEnvironment(
    inMemoryStorage: InMemoryStorage(),
    fileStorage: .fileSystem,
    writeClock: .live
  )

  /// A value another module keeps here (its storage, say): the one set, or else its test or
  /// live value, made once per environment.
  public subscript<Key: SharedEnvironmentKey>(key: Key.Type) -> Key.Value {
    get { values.value(for: key, isTest: isTest) }
    set { values = values.setting(newValue, for: key) }
  }

  /// The environment keys capture when they are created.
  @TaskLocal public static var current: SharedEnvironment = .live

  /// A fresh environment for a test: empty in-memory storage, an empty in-memory file system,
  /// empty in-memory defaults, the test value of every ``SharedEnvironmentKey`` (an empty
  /// in-memory secret store for `Secrets`), a manual clock, and no registration with
  /// ``PendingWrites``.
  ///
  /// - Parameters:
  ///   - fileSystem: The in-memory file system, to inspect or edit from the test.
  ///   - clock: The write clock, to advance from the test.
  ///   - reportIssue: Where programming errors go (standard error by default).
  ///   - defaults: The in-memory defaults of `.appStorage` keys.
  public static func test(
    fileSystem: InMemoryFileSystem = InMemoryFileSystem(),
    defaults: InMemoryDefaults = InMemoryDefaults(),
    clock: TestWriteClock = TestWriteClock(),
    reportIssue: @escaping @Sendable (String) -> Void = SharedEnvironment.printIssue
  ) -> SharedEnvironment {
    SharedEnvironment(
      inMemoryStorage: InMemoryStorage(),
      fileStorage: fileSystem.fileStorage,
      defaults: defaults.store,
      writeClock: clock.clock,
      reportIssue: reportIssue,
      flushesPendingWritesAtExit: false,
      isTest: true
    )
  }

  /// Runs `operation` with this environment as ``current``.
  public func withValue<R>(_ operation: () throws -> R) rethrows -> R {
    try Self.$current.withValue(self, operation: operation)
  }

  /// Runs `operation` with this environment as ``current``.
  public func withValue<R>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> R
  ) async rethrows -> R {
    try await Self.$current.withValue(self, operation: operation, isolation: isolation)
  }

  /// The default issue reporter: a runtime warning on standard error.
  public static let printIssue: @Sendable (String) -> Void = { message in
    try? FileDescriptor.standardError.writeAll("SharedState runtime warning: \(message)\n")
  }
}

/// Errors raised by the shared-state machinery itself (not by a key).
public enum SharedStateError: Error, CustomStringConvertible, Sendable {
  /// A key dropped a continuation without resuming it.
  case continuationNeverResumed(String)
  /// `Shared(require:)` found nothing stored for the key.
  case valueNotFound(String)

  /// What went wrong and what to do about it.
  public var description: String {
    switch self {
    case .continuationNeverResumed(let what):
      "\(what) was released without being resumed; the key must resume its continuation exactly once."
    case .valueNotFound(let key):
      "No value is stored for \(key). Store one first, or declare a default instead of using require:."
    }
  }
}

/// A value another module keeps in the ``SharedEnvironment``, with what it is live and in tests.
///
/// ```swift
/// enum TokenStoreKey: SharedEnvironmentKey {
///   static var liveValue: TokenStore { .keyring }
///   static func testValue() -> TokenStore { .inMemory() }
/// }
/// extension SharedEnvironment {
///   var tokenStore: TokenStore {
///     get { self[TokenStoreKey.self] }
///     set { self[TokenStoreKey.self] = newValue }
///   }
/// }
/// ```
public protocol SharedEnvironmentKey {
  /// The type of the value kept in the environment (a storage, a client).
  associatedtype Value: Sendable
  /// The value of a live environment, made on first use.
  static var liveValue: Value { get }
  /// A fresh value for a test environment, made once per environment on first use.
  static func testValue() -> Value
}

/// The values of ``SharedEnvironmentKey``s, made once per environment and shared by its copies.
final class ExtraValues: Sendable {
  private let values: Mutex<[ObjectIdentifier: any Sendable]>

  init(_ values: [ObjectIdentifier: any Sendable] = [:]) { self.values = Mutex(values) }

  func value<Key: SharedEnvironmentKey>(for key: Key.Type, isTest: Bool) -> Key.Value {
    values.withLock { values in
      if let value = values[ObjectIdentifier(key)] as? Key.Value { return value }
      let made = isTest ? Key.testValue() : Key.liveValue
      values[ObjectIdentifier(key)] = made
      return made
    }
  }

  /// A copy with `value` set: the environment that sets it no longer shares its values.
  func setting<Key: SharedEnvironmentKey>(_ value: Key.Value, for key: Key.Type) -> ExtraValues {
    var copy = values.withLock { $0 }
    copy[ObjectIdentifier(key)] = value
    return ExtraValues(copy)
  }
}
