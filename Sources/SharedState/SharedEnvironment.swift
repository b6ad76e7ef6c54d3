/// The storage, clock and issue reporter the keys use, injectable per task.
///
/// Keys capture the environment current when they are created (`.inMemory(_:)`,
/// `.fileStorage(_:)`), so a test that runs its body inside `withValue(_:)` gets empty
/// in-memory storage, an in-memory file system and a manual write clock, and never touches
/// the real home folder.
///
/// ```swift
/// @Test func counter() throws {
///   let environment = SharedEnvironment.test()
///   try environment.withValue {
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
  /// The clock that closes `.fileStorage(_:)` write windows.
  public var writeClock: WriteClock
  /// Receives programming errors (a continuation resumed twice or never, a type mismatch).
  public var reportIssue: @Sendable (String) -> Void
  /// Whether `.fileStorage(_:)` batches register with ``PendingWrites`` (flushed at exit, on
  /// SIGTERM/SIGINT and by ``PendingWrites/flushAll()``). `true` live, `false` in ``test(fileSystem:clock:reportIssue:)``
  /// so tests never install signal handlers and never flush each other's windows.
  public var flushesPendingWritesAtExit: Bool

  /// Creates an environment.
  public init(
    inMemoryStorage: InMemoryStorage,
    fileStorage: FileStorage,
    writeClock: WriteClock,
    reportIssue: @escaping @Sendable (String) -> Void = SharedEnvironment.printIssue,
    flushesPendingWritesAtExit: Bool = true
  ) {
    self.inMemoryStorage = inMemoryStorage
    self.fileStorage = fileStorage
    self.writeClock = writeClock
    self.reportIssue = reportIssue
    self.flushesPendingWritesAtExit = flushesPendingWritesAtExit
  }

  /// The process-wide environment: one in-memory store, the real file system, the continuous
  /// clock, issues printed to standard error.
  public static let live = SharedEnvironment(
    inMemoryStorage: InMemoryStorage(),
    fileStorage: .fileSystem,
    writeClock: .live
  )

  /// The environment keys capture when they are created.
  @TaskLocal public static var current: SharedEnvironment = .live

  /// A fresh environment for a test: empty in-memory storage, an empty in-memory file system,
  /// a manual clock, and no registration with ``PendingWrites``.
  ///
  /// - Parameters:
  ///   - fileSystem: The in-memory file system, to inspect or edit from the test.
  ///   - clock: The write clock, to advance from the test.
  ///   - reportIssue: Where programming errors go (standard error by default).
  public static func test(
    fileSystem: InMemoryFileSystem = InMemoryFileSystem(),
    clock: TestWriteClock = TestWriteClock(),
    reportIssue: @escaping @Sendable (String) -> Void = SharedEnvironment.printIssue
  ) -> SharedEnvironment {
    SharedEnvironment(
      inMemoryStorage: InMemoryStorage(),
      fileStorage: fileSystem.fileStorage,
      writeClock: clock.clock,
      reportIssue: reportIssue,
      flushesPendingWritesAtExit: false
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
    Syscalls.writeToStandardError("SharedState runtime warning: \(message)\n")
  }
}

/// Errors raised by the shared-state machinery itself (not by a key).
public enum SharedStateError: Error, CustomStringConvertible, Sendable {
  /// A key dropped a continuation without resuming it.
  case continuationNeverResumed(String)
  /// `Shared(require:)` found nothing stored for the key.
  case valueNotFound(String)

  public var description: String {
    switch self {
    case let .continuationNeverResumed(what):
      "\(what) was released without being resumed; the key must resume its continuation exactly once."
    case let .valueNotFound(key):
      "No value is stored for \(key). Store one first, or declare a default instead of using require:."
    }
  }
}
