public import Foundation
import Synchronization
import SystemCalls

/// The file system behind ``FileStorageKey``: read, atomic write, delete and watch, as closures.
///
/// ``fileSystem`` is the real one; ``inMemory`` (or an ``InMemoryFileSystem`` you keep) is for
/// tests. Two keys share a reference only when they use the same `FileStorage` value (its
/// identity is part of the key's id).
public struct FileStorage: Sendable {
  /// Reads a whole file; `nil` when it does not exist.
  public var read: @Sendable (URL) throws -> Data?
  /// Replaces a file atomically, creating missing folders. Throws
  /// ``FileStorageError/replacedButNotSynced(path:reason:)`` when the file was replaced but the
  /// change may not be durable yet; any other error means the file was left untouched.
  public var write: @Sendable (Data, URL) throws -> Void
  /// Removes a file; one that does not exist is not an error.
  public var delete: @Sendable (URL) throws -> Void
  /// Calls the handler after the file is written, replaced or deleted by anyone.
  public var watch: @Sendable (URL, @escaping @Sendable () -> Void) throws -> SharedSubscription

  final class Identity: Sendable {}
  let identity: any AnyObject & Sendable

  /// Creates a file system from its operations (each value is a distinct file system).
  public init(
    read: @escaping @Sendable (URL) throws -> Data?,
    write: @escaping @Sendable (Data, URL) throws -> Void,
    delete: @escaping @Sendable (URL) throws -> Void,
    watch: @escaping @Sendable (URL, @escaping @Sendable () -> Void) throws -> SharedSubscription
  ) {
    self.init(identity: Identity(), read: read, write: write, delete: delete, watch: watch)
  }

  init(
    identity: any AnyObject & Sendable,
    read: @escaping @Sendable (URL) throws -> Data?,
    write: @escaping @Sendable (Data, URL) throws -> Void,
    delete: @escaping @Sendable (URL) throws -> Void,
    watch: @escaping @Sendable (URL, @escaping @Sendable () -> Void) throws -> SharedSubscription
  ) {
    self.identity = identity
    self.read = read
    self.write = write
    self.delete = delete
    self.watch = watch
  }

  /// The real file system: POSIX reads, atomic writes (temporary file, `fsync`, `rename`,
  /// permissions kept, folder `fsync`), inotify watches on the file's folder.
  public static let fileSystem = FileStorage(
    identity: Identity(),
    read: { url in
      do throws(FileCallError) { return try Files.read(url.standardizedFileURL.path).map { Data($0) } } catch {
        throw FileStorageError(error)
      }
    },
    write: { data, url in
      do throws(AtomicWriteError) { try Files.replace(url.standardizedFileURL.path, with: Array(data)) } catch {
        throw FileStorageError(error)
      }
    },
    delete: { url in
      do throws(FileCallError) { try Files.remove(url.standardizedFileURL.path) } catch {
        throw FileStorageError(error)
      }
    },
    watch: { url, onChange in
      try FileWatcher.watch(path: url.standardizedFileURL.path, onChange: onChange)
    }
  )

  /// A new, empty in-memory file system, for tests (keep an ``InMemoryFileSystem`` instead to
  /// look inside it).
  public static var inMemory: FileStorage { InMemoryFileSystem().fileStorage }

  /// A copy whose writes are also reported to `didWrite` (for measuring and tests). It keeps
  /// the identity of the original.
  public func observingWrites(_ didWrite: @escaping @Sendable (URL, Data) -> Void) -> FileStorage {
    let write = self.write
    return FileStorage(
      identity: identity, read: read,
      write: { data, url in
        try write(data, url)
        didWrite(url, data)
      },
      delete: delete, watch: watch)
  }
}

/// An in-memory file system for tests: starts empty, counts writes, and lets a test play
/// "another process" with ``setContents(_:atPath:)``, which notifies watchers synchronously.
///
/// ```swift
/// let files = InMemoryFileSystem()
/// SharedEnvironment.test(fileSystem: files).withValue {
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
      identity: self,
      read: { [self] url in contents(atPath: url.standardizedFileURL.path) },
      write: { [self] data, url in
        let path = url.standardizedFileURL.path
        state.withLock {
          $0.files[path] = data
          $0.writeCounts[path, default: 0] += 1
        }
        notify(path)
      },
      delete: { [self] url in
        let path = url.standardizedFileURL.path
        state.withLock { _ = $0.files.removeValue(forKey: path) }
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
