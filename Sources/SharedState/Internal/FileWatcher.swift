import Dispatch
import Synchronization
import SystemCalls

/// Watches files through inotify on their folders, so atomic replacements (a new inode renamed
/// over the name) are seen as well as in-place writes and deletions.
///
/// One inotify instance serves the whole process: the kernel allows only 128 per user, and a
/// program (or a test run) watching many files must not run out of them. Events are read on a
/// private serial dispatch queue; `onChange` runs there once per batch of events that concern
/// its file.
final class FileWatcher: Sendable {
  /// Made on first use; a failure (no inotify instance left) is not kept, so a later watch retries.
  private static let shared = Mutex<FileWatcher?>(nil)

  private struct Observer {
    let name: String
    let onChange: @Sendable () -> Void
  }

  private let inotify: Inotify
  private let queue = DispatchQueue(label: "SharedState.FileWatcher")
  /// Kept for the life of the process: a released dispatch source stops delivering events.
  private let source: SourceHandle
  /// Observers by watch descriptor (one per folder) and by id.
  private let observers = Mutex<[Inotify.Watch: [UInt64: Observer]]>([:])
  private let nextID = Atomic<UInt64>(0)

  private init() throws(FileStorageError) {
    let inotify: Inotify
    do throws(Errno) { inotify = try Inotify() } catch {
      throw FileStorageError(FileCallError(call: "inotify_init1", path: "(inotify)", errno: error))
    }
    self.inotify = inotify
    source = SourceHandle(
      source: DispatchSource.makeReadSource(fileDescriptor: inotify.descriptor.rawValue, queue: queue))
    source.source.setEventHandler { [weak self] in self?.dispatch(inotify.events()) }
    source.source.resume()
  }

  /// Calls `onChange` when the file at `path` is written, replaced or deleted.
  static func watch(path: String, onChange: @escaping @Sendable () -> Void) throws(FileStorageError)
    -> SharedSubscription
  {
    let watcher = try shared.withLock { (shared: inout FileWatcher?) throws(FileStorageError) in
      if let shared { return shared }
      let created = try FileWatcher()
      shared = created
      return created
    }
    return try watcher.add(path: path, onChange: onChange)
  }

  private func add(path: String, onChange: @escaping @Sendable () -> Void) throws(FileStorageError)
    -> SharedSubscription
  {
    let (directory, name) = Files.split(path)
    let id = nextID.add(1, ordering: .relaxed).newValue
    let watch = try observers.withLock {
      (observers: inout [Inotify.Watch: [UInt64: Observer]]) throws(FileStorageError) in
      let watch: Inotify.Watch
      do throws(Errno) { watch = try inotify.watch(directory: directory) } catch {
        throw FileStorageError(FileCallError(call: "inotify_add_watch", path: directory, errno: error))
      }
      observers[watch, default: [:]][id] = Observer(name: name, onChange: onChange)
      return watch
    }
    return SharedSubscription { [self] in remove(id, from: watch) }
  }

  /// Forgets an observer, and stops watching its folder when it was the last one there.
  private func remove(_ id: UInt64, from watch: Inotify.Watch) {
    observers.withLock { observers in
      observers[watch]?[id] = nil
      guard observers[watch]?.isEmpty == true else { return }
      observers[watch] = nil
      inotify.remove(watch)
    }
  }

  private func dispatch(_ events: [(watch: Inotify.Watch, name: String)]) {
    let due = observers.withLock { observers in
      var due: [UInt64: @Sendable () -> Void] = [:]
      for event in events {
        for (id, observer) in observers[event.watch] ?? [:] where observer.name == event.name {
          due[id] = observer.onChange
        }
      }
      return Array(due.values)
    }
    due.forEach { $0() }
  }
}

/// Holds the dispatch source.
///
/// `@unchecked Sendable` is safe here: the only stored property is a `let`, set before the
/// source is resumed and never replaced; dispatch sources are internally synchronised objects
/// (libdispatch documents their calls as thread-safe).
private final class SourceHandle: @unchecked Sendable {
  let source: any DispatchSourceRead
  init(source: any DispatchSourceRead) { self.source = source }
}
