// inotify: one instance, watches on folders, events read in batches.
import Glibc

/// An inotify instance. Wraps inotify_init1, inotify_add_watch, inotify_rm_watch, read.
package struct Inotify: Sendable {
  /// One watch of an instance, as inotify numbers it.
  package struct Watch: Hashable, Sendable {
    package let rawValue: CInt
  }

  package let descriptor: FileDescriptor

  /// A non-blocking instance that closes on exec. Wraps inotify_init1(2).
  package init() throws(Errno) {
    let raw = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard raw >= 0 else { throw .current }
    descriptor = FileDescriptor(rawValue: raw)
  }

  /// Watches `directory` for files written, moved in or out, created or deleted; the watch
  /// descriptor (the same for a folder already watched). Wraps inotify_add_watch(2).
  package func watch(directory: String) throws(Errno) -> Watch {
    let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
    let watch = inotify_add_watch(descriptor.rawValue, directory, mask)
    guard watch >= 0 else { throw .current }
    return Watch(rawValue: watch)
  }

  /// Wraps inotify_rm_watch(2).
  package func remove(_ watch: Watch) { _ = inotify_rm_watch(descriptor.rawValue, watch.rawValue) }

  /// Every pending event: its watch descriptor and file name. Wraps read(2).
  package func events() -> [(watch: Watch, name: String)] {
    var events: [(watch: Watch, name: String)] = []
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    let header = MemoryLayout<inotify_event>.size
    while true {
      guard
        let count = try? buffer.withUnsafeMutableBytes({ raw in
          Result { () throws(Errno) in try descriptor.read(into: raw) }
        }).get(),
        count > 0
      else { break }
      var offset = 0
      while offset + header <= count {
        let (watch, length) = buffer.withUnsafeBytes { raw in
          (
            raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
            Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
          )
        }
        let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)]
        events.append((Watch(rawValue: watch), String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)))
        offset += header + length
      }
    }
    return events
  }
}
