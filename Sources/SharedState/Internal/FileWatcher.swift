import Dispatch

/// Watches one file through inotify on its folder, so atomic replacements (a new inode
/// renamed over the name) are seen as well as in-place writes and deletions.
///
/// Events arrive on a private serial dispatch queue; `onChange` runs there once per batch of
/// events that concern the file.
enum FileWatcher {
  static func watch(
    path: String, onChange: @escaping @Sendable () -> Void
  ) throws(FileStorageError) -> SharedSubscription {
    let (directory, name) = Syscalls.split(path)
    let descriptor = try Syscalls.watchDirectory(directory)
    let queue = DispatchQueue(label: "SharedState.FileWatcher \(path)")
    let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
    source.setEventHandler {
      let names = Syscalls.readInotifyNames(descriptor)
      if names.contains(name) { onChange() }
    }
    source.setCancelHandler { Syscalls.closeDescriptor(descriptor) }
    source.resume()
    let handle = SourceHandle(source: source)
    return SharedSubscription { handle.source.cancel() }
  }
}

/// Carries a dispatch source into the cancel closure.
///
/// `@unchecked Sendable` is safe here: the only stored property is a `let`, and dispatch
/// sources are internally synchronised objects whose `cancel()` may be called from any
/// thread (libdispatch documents `dispatch_source_cancel` as thread-safe).
private final class SourceHandle: @unchecked Sendable {
  let source: any DispatchSourceRead
  init(source: any DispatchSourceRead) { self.source = source }
}
