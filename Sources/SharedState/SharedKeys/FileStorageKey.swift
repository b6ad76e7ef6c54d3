public import Foundation
import Synchronization

extension SharedReaderKey {
  /// A `Codable` value stored as JSON in a file.
  ///
  /// The file is read when the first handle is created; nothing is written before the first
  /// mutation. Mutations are batched: the first opens a write window (`writeWindow`, 1 s by
  /// default) and the latest value is written once when it closes; `try await $x.save()`
  /// writes before returning. Writes are atomic (temporary file in the same folder, `fsync`,
  /// `rename`, permissions kept). Pending writes are flushed at exit and on SIGTERM/SIGINT
  /// (see ``PendingWrites``). Changes made by other processes reach the value.
  ///
  /// A file that exists but cannot be decoded is never overwritten silently: `loadError`
  /// names the file and the reason, and before the first write over it its bytes are kept
  /// beside it as `NAME.corrupt-TIMESTAMP`.
  ///
  /// ```swift
  /// extension SharedKey where Self == FileStorageKey<[Note]>.Default {
  ///   static var notes: Self {
  ///     Self[.fileStorage(URL(filePath: "/home/me/.local/share/tool/notes.json")), default: []]
  ///   }
  /// }
  /// @Shared(.notes) var notes
  /// ```
  ///
  /// - Parameters:
  ///   - url: The file.
  ///   - writeWindow: How long a batch of mutations waits before one write.
  public static func fileStorage<Value: Codable & Sendable>(
    _ url: URL, writeWindow: Duration = .seconds(1)
  ) -> Self where Self == FileStorageKey<Value> {
    FileStorageKey(
      url: url, writeWindow: writeWindow,
      decode: { try JSONDecoder().decode(Value.self, from: $0) },
      encode: { try JSONEncoder().encode($0) }
    )
  }

  /// A value stored in a file with custom coding.
  ///
  /// - Parameters:
  ///   - url: The file.
  ///   - writeWindow: How long a batch of mutations waits before one write.
  ///   - decode: Turns the file's bytes into a value.
  ///   - encode: Turns a value into the file's bytes.
  public static func fileStorage<Value: Sendable>(
    _ url: URL,
    writeWindow: Duration = .seconds(1),
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) -> Self where Self == FileStorageKey<Value> {
    FileStorageKey(url: url, writeWindow: writeWindow, decode: decode, encode: encode)
  }
}

/// The key behind ``SharedReaderKey/fileStorage(_:writeWindow:)``.
///
/// Its identity is the file's path and the ``FileStorage`` it lives in, not the coders or the
/// window.
public struct FileStorageKey<Value: Sendable>: SharedKey, CustomStringConvertible {
  let core: FileStorageCore<Value>

  init(
    url: URL, writeWindow: Duration,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    let environment = SharedEnvironment.current
    core = FileStorageCore(
      path: url.standardizedFileURL.path, storage: environment.fileStorage,
      clock: environment.writeClock, window: writeWindow, reportIssue: environment.reportIssue,
      flushesAtExit: environment.flushesPendingWritesAtExit, decode: decode, encode: encode)
  }

  /// The file's path and its file system.
  public struct ID: Hashable, Sendable {
    let path: String
    let storage: ObjectIdentifier
  }

  public var id: ID { ID(path: core.path, storage: ObjectIdentifier(core.storage.identity)) }

  public var description: String { ".fileStorage(\(core.path))" }

  /// Reads and decodes the file: absent → the declared default; undecodable →
  /// ``FileStorageError/decodingFailed(path:reason:)``.
  ///
  /// A `.userInitiated` reload that succeeds drops a change still waiting in the write window:
  /// the value now matches the file, and the file is not overwritten with the older change.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    let result = core.read()
    if case .userInitiated = context, case .success = result { core.dropPendingWrite() }
    continuation.resume(with: result)
  }

  /// Watches the file for changes made by others; the key's own writes do not echo back.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    core.subscribe(subscriber)
  }

  /// `.didSet`: batched in the write window. `.userInitiated`: written before resuming.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    switch context {
    case .didSet:
      core.batcher.schedule(value) { continuation.resume(with: $0) }
    case .userInitiated:
      continuation.resume(with: Result { try core.batcher.writeNow(value) })
    }
  }
}

/// The per-reference state of a ``FileStorageKey``: its file, its write batcher and its
/// watch.
final class FileStorageCore<Value: Sendable>: Sendable {
  let file: StoredFile<Value>
  private let clock: WriteClock
  private let window: Duration
  private let flushesAtExit: Bool
  private let reportIssue: @Sendable (String) -> Void
  private let lazyBatcher = Mutex<WriteBatcher<Value>?>(nil)
  private let watch = Mutex<WatchState?>(nil)

  private struct WatchState {
    var subscriber: SharedSubscriber<Value>
    var subscription: SharedSubscription?
  }

  var path: String { file.path }
  var storage: FileStorage { file.storage }

  init(
    path: String, storage: FileStorage, clock: WriteClock, window: Duration,
    reportIssue: @escaping @Sendable (String) -> Void, flushesAtExit: Bool,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    file = StoredFile(path: path, storage: storage, decode: decode, encode: encode)
    self.clock = clock
    self.window = window
    self.flushesAtExit = flushesAtExit
    self.reportIssue = reportIssue
  }

  deinit {
    // Last handle gone: write what is pending before the batcher goes. No handle is left to
    // show a save error, so a failure is reported.
    do {
      try lazyBatcher.withLock { $0 }?.flush()
    } catch {
      reportIssue("The last value for \(path) could not be written when its last handle went away: \(error)")
    }
    watch.withLock { $0?.subscription }?.cancel()
  }

  /// Created on the first save, so reading a file registers nothing.
  var batcher: WriteBatcher<Value> {
    lazyBatcher.withLock { batcher in
      if let batcher { return batcher }
      let created = WriteBatcher<Value>(
        window: window, clock: clock, flushesAtExit: flushesAtExit
      ) { [file, weak self] value in
        try file.write(value)
        self?.startWatchingIfNeeded()
      }
      batcher = created
      return created
    }
  }

  func read() -> Result<Value?, any Error> { file.read() }

  /// Drops a change waiting in the window; its save counts as done.
  func dropPendingWrite() {
    lazyBatcher.withLock { $0 }?.cancelPendingWrite(completingWith: .success(()))
  }

  // MARK: Watching

  func subscribe(_ subscriber: SharedSubscriber<Value>) -> SharedSubscription {
    watch.withLock { $0 = WatchState(subscriber: subscriber) }
    startWatchingIfNeeded()
    return SharedSubscription { [weak self] in
      self?.watch.withLock { $0.take() }?.subscription?.cancel()
    }
  }

  /// Starts the watch if a subscriber waits for one. A folder that does not exist yet is
  /// watched after the first write creates it.
  private func startWatchingIfNeeded() {
    guard watch.withLock({ $0 != nil && $0?.subscription == nil }) else { return }
    let subscription: SharedSubscription
    do {
      subscription = try storage.watch(URL(filePath: path)) { [weak self] in self?.fileChanged() }
    } catch {
      if !storage.isFileSystem || Syscalls.fileExists(atPath: Syscalls.split(path).directory) {
        reportIssue("Changes to \(path) made by other processes will not be seen: \(error)")
      }
      return
    }
    let unused: SharedSubscription? = watch.withLock { state in
      guard state != nil, state?.subscription == nil else { return subscription }
      state?.subscription = subscription
      return nil
    }
    unused?.cancel()
  }

  private func fileChanged() {
    guard let subscriber = watch.withLock({ $0?.subscriber }) else { return }
    switch file.externalChange() {
    case .none:
      return
    case let .changed(result):
      if case .success = result {
        // The other writer is more recent than a change still waiting in our window.
        dropPendingWrite()
      }
      subscriber.yield(with: result)
    }
  }
}

/// One file as a key sees it: reading, writing, and the bytes last read or written (to
/// recognise its own writes when they echo back, and bytes it never saw).
final class StoredFile<Value: Sendable>: Sendable {
  enum Change {
    case none
    case changed(Result<Value?, any Error>)
  }

  let path: String
  let storage: FileStorage
  private let decode: @Sendable (Data) throws -> Value
  private let encode: @Sendable (Value) throws -> Data
  /// The bytes last read from or written to the file; `nil` when it did not exist.
  private let knownBytes = Mutex<Data?>(nil)

  init(
    path: String, storage: FileStorage,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    self.path = path
    self.storage = storage
    self.decode = decode
    self.encode = encode
  }

  private var url: URL { URL(filePath: path) }

  /// Absent → `.success(nil)`; undecodable → ``FileStorageError/decodingFailed(path:reason:)``.
  func read() -> Result<Value?, any Error> {
    let bytes: Data?
    do {
      bytes = try storage.read(url)
    } catch {
      return .failure(error)
    }
    return interpret(bytes)
  }

  /// What a watch event means: nothing (our own write), or a new result.
  func externalChange() -> Change {
    let bytes: Data?
    do {
      bytes = try storage.read(url)
    } catch {
      return .changed(.failure(error))
    }
    if knownBytes.withLock({ $0 == bytes }) { return .none }
    return .changed(interpret(bytes))
  }

  private func interpret(_ bytes: Data?) -> Result<Value?, any Error> {
    guard let bytes else {
      knownBytes.withLock { $0 = nil }
      return .success(nil)
    }
    do {
      let value = try decode(bytes)
      knownBytes.withLock { $0 = bytes }
      return .success(value)
    } catch {
      return .failure(FileStorageError.decodingFailed(path: path, reason: "\(error)"))
    }
  }

  /// Encodes and writes a value atomically. If the file holds bytes this key neither wrote
  /// nor read and they do not decode, they are first kept beside it as
  /// `NAME.corrupt-TIMESTAMP`; if that copy cannot be made, nothing is written.
  func write(_ value: Value) throws {
    let bytes: Data
    do {
      bytes = try encode(value)
    } catch {
      throw FileStorageError.encodingFailed(path: path, reason: "\(error)")
    }
    let current = try storage.read(url)
    if let current, current != knownBytes.withLock({ $0 }), (try? decode(current)) == nil {
      try keepCorruptCopy(current)
    }
    // Recorded before the write so that the watch never mistakes it for someone else's.
    let previous = knownBytes.withLock { known in
      defer { known = bytes }
      return known
    }
    do {
      try storage.write(bytes, url)
    } catch {
      // Unless it was replaced, the file still holds what it held before: forget these bytes
      // (if no read recorded newer ones meanwhile), so that a change another process made
      // since still looks new when its event arrives.
      if !Self.replacedTheFile(error) {
        knownBytes.withLock { known in if known == bytes { known = previous } }
      }
      throw error
    }
  }

  /// Whether a failed write still put its bytes in the file (only the folder sync failed).
  private static func replacedTheFile(_ error: any Error) -> Bool {
    (error as? any StoredDespiteError)?.valueIsStored == true
  }

  private func keepCorruptCopy(_ bytes: Data) throws {
    let base = "\(path).corrupt-\(Syscalls.fileNameTimestamp())"
    var candidate = base
    var suffix = 1
    while try storage.read(URL(filePath: candidate)) != nil {
      suffix += 1
      candidate = "\(base)-\(suffix)"
    }
    try storage.write(bytes, URL(filePath: candidate))
  }
}

/// The file system behind ``FileStorageKey``: read, atomic write and watch, as closures.
///
/// ``fileSystem`` is the real one; ``InMemoryFileSystem/fileStorage`` is for tests. Two keys
/// share a reference only when they use the same `FileStorage` value (its identity is part of
/// the key's id).
public struct FileStorage: Sendable {
  /// Reads a whole file; `nil` when it does not exist.
  public var read: @Sendable (URL) throws -> Data?
  /// Replaces a file atomically, creating missing folders. Throws
  /// ``FileStorageError/replacedButNotSynced(path:errno:)`` when the file was replaced but the
  /// change may not be durable yet; any other error means the file was left untouched.
  public var write: @Sendable (Data, URL) throws -> Void
  /// Calls the handler after the file is written, replaced or deleted by anyone.
  public var watch: @Sendable (URL, @escaping @Sendable () -> Void) throws -> SharedSubscription

  final class Identity: Sendable {}
  let identity: any AnyObject & Sendable
  let isFileSystem: Bool

  /// Creates a file system from its operations (each value is a distinct file system).
  public init(
    read: @escaping @Sendable (URL) throws -> Data?,
    write: @escaping @Sendable (Data, URL) throws -> Void,
    watch: @escaping @Sendable (URL, @escaping @Sendable () -> Void) throws -> SharedSubscription
  ) {
    self.init(identity: Identity(), isFileSystem: false, read: read, write: write, watch: watch)
  }

  init(
    identity: any AnyObject & Sendable, isFileSystem: Bool,
    read: @escaping @Sendable (URL) throws -> Data?,
    write: @escaping @Sendable (Data, URL) throws -> Void,
    watch: @escaping @Sendable (URL, @escaping @Sendable () -> Void) throws -> SharedSubscription
  ) {
    self.identity = identity
    self.isFileSystem = isFileSystem
    self.read = read
    self.write = write
    self.watch = watch
  }

  /// The real file system: POSIX reads, atomic writes (temporary file, `fsync`, `rename`,
  /// permissions kept, folder `fsync`), inotify watches on the file's folder.
  public static let fileSystem = FileStorage(
    identity: Identity(), isFileSystem: true,
    read: { url in try Syscalls.readFile(atPath: url.standardizedFileURL.path) },
    write: { data, url in try Syscalls.writeFileAtomically(data, toPath: url.standardizedFileURL.path) },
    watch: { url, onChange in
      try FileWatcher.watch(path: url.standardizedFileURL.path, onChange: onChange)
    }
  )

  /// A copy whose writes are also reported to `didWrite` (for measuring and tests). It keeps
  /// the identity of the original.
  public func observingWrites(_ didWrite: @escaping @Sendable (URL, Data) -> Void) -> FileStorage {
    let write = self.write
    return FileStorage(
      identity: identity, isFileSystem: isFileSystem, read: read,
      write: { data, url in
        try write(data, url)
        didWrite(url, data)
      },
      watch: watch)
  }
}

/// An in-memory file system for tests: starts empty, counts writes, and lets a test play
/// "another process" with ``setContents(_:atPath:)``, which notifies watchers synchronously.
///
/// ```swift
/// let files = InMemoryFileSystem()
/// try SharedEnvironment.test(fileSystem: files).withValue {
///   @Shared(.fileStorage(URL(filePath: "/tmp/n.json"))) var n = 0
///   files.setContents(Data("7".utf8), atPath: "/tmp/n.json")
///   #expect(n == 7)
/// }
/// ```
public final class InMemoryFileSystem: Sendable {
  private struct State {
    var files: [String: Data] = [:]
    var writeCounts: [String: Int] = [:]
    var watchers: [UInt64: (path: String, onChange: @Sendable () -> Void)] = [:]
    var nextWatcher: UInt64 = 0
  }

  private let state = Mutex(State())

  /// Creates a file system holding `files` (path → contents).
  public init(files: [String: Data] = [:]) {
    state.withLock { $0.files = files }
  }

  /// The ``FileStorage`` to put in a ``SharedEnvironment``.
  public var fileStorage: FileStorage {
    FileStorage(
      identity: self, isFileSystem: false,
      read: { [self] url in contents(atPath: url.standardizedFileURL.path) },
      write: { [self] data, url in
        let path = url.standardizedFileURL.path
        state.withLock {
          $0.files[path] = data
          $0.writeCounts[path, default: 0] += 1
        }
        notify(path)
      },
      watch: { [self] url, onChange in
        let path = url.standardizedFileURL.path
        let id = state.withLock { state in
          state.nextWatcher += 1
          state.watchers[state.nextWatcher] = (path, onChange)
          return state.nextWatcher
        }
        return SharedSubscription { [weak self] in
          _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
        }
      })
  }

  /// The contents of a file, `nil` if absent.
  public func contents(atPath path: String) -> Data? {
    state.withLock { $0.files[path] }
  }

  /// Writes (or deletes, with `nil`) a file as another process would, and notifies watchers.
  /// Not counted in ``writeCount(atPath:)``.
  public func setContents(_ data: Data?, atPath path: String) {
    state.withLock { $0.files[path] = data }
    notify(path)
  }

  /// How many times keys wrote a file.
  public func writeCount(atPath path: String) -> Int {
    state.withLock { $0.writeCounts[path, default: 0] }
  }

  /// Every path that exists.
  public var paths: [String] { state.withLock { $0.files.keys.sorted() } }

  private func notify(_ path: String) {
    let handlers = state.withLock { $0.watchers.values.filter { $0.path == path }.map(\.onChange) }
    for handler in handlers { handler() }
  }
}

/// Errors of ``FileStorageKey`` and ``FileStorage``; each message names the file and says
/// what to do.
public enum FileStorageError: Error, CustomStringConvertible, Sendable {
  /// The file exists but its bytes could not be decoded. It is left untouched; before
  /// anything is written over it, its bytes are kept beside it as `NAME.corrupt-TIMESTAMP`.
  case decodingFailed(path: String, reason: String)
  /// The value could not be encoded; nothing was written.
  case encodingFailed(path: String, reason: String)
  /// A system call failed.
  case systemCall(_ call: String, path: String, errno: Int32)
  /// The file was replaced with the new bytes, but its folder could not be synced: the change
  /// may be lost if the system crashes before it writes the folder on its own.
  case replacedButNotSynced(path: String, errno: Int32)

  public var description: String {
    switch self {
    case let .decodingFailed(path, reason):
      "Could not decode \(path): \(reason). The file was left untouched; before anything is "
        + "written over it, its current bytes will be kept beside it as "
        + "\(Syscalls.split(path).name).corrupt-<timestamp>. Fix or remove the file and reload, "
        + "or change the value to replace it."
    case let .encodingFailed(path, reason):
      "Could not encode the value for \(path): \(reason). Nothing was written."
    case let .systemCall(call, path, code):
      "\(call) failed for \(path): \(Syscalls.describe(errno: code)) (errno \(code)). "
        + Syscalls.advice(forErrno: code)
    case let .replacedButNotSynced(path, code):
      "\(path) was written, but its folder could not be synced: \(Syscalls.describe(errno: code)) "
        + "(errno \(code)); the change may be lost if the system crashes. "
        + Syscalls.advice(forErrno: code)
    }
  }
}

extension FileStorageError: StoredDespiteError {
  var valueIsStored: Bool {
    guard case .replacedButNotSynced = self else { return false }
    return true
  }
}
