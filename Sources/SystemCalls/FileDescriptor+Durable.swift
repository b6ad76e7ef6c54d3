// Durable writes: at a position, data synced, files renamed, and an exclusive hold on a file.
import Glibc

extension FileDescriptor {
  /// Writes every byte at `offset`, retrying partial writes and interruptions; the file
  /// position does not move. Wraps pwrite(2).
  package func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(Errno) {
    guard var next = bytes.baseAddress else { return }
    var left = bytes.count
    var position = off_t(offset)
    while left > 0 {
      let written = try retryingOnInterrupt { pwrite(rawValue, next, left, position) }
      next += written
      left -= written
      position += off_t(written)
    }
  }

  /// Syncs the file's bytes and the metadata needed to read them back (its size), but not its
  /// times. Wraps fdatasync(2).
  package func syncData() throws(Errno) {
    _ = try retryingOnInterrupt { fdatasync(rawValue) }
  }

  /// Takes an exclusive hold on the file that lasts until every descriptor of this open file
  /// is closed; fails with ``Errno/wouldBlock`` when another still holds it after `patience`.
  /// A holder that is letting go keeps it for a moment: a process exiting, or a child between
  /// fork and exec, which holds a copy of every descriptor of its parent. Advisory: only those
  /// who ask are kept out. Wraps flock(2) with LOCK_EX | LOCK_NB, tried every 5 ms.
  package func holdExclusively(patience: Duration = .zero) throws(Errno) {
    let clock = ContinuousClock()
    let deadline = clock.now + patience
    while true {
      do throws(Errno) {
        _ = try retryingOnInterrupt { flock(rawValue, LOCK_EX | LOCK_NB) }
        return
      } catch let error where error == .wouldBlock && clock.now < deadline {
        usleep(5_000)
      }
    }
  }
}

extension Files {
  /// Renames `path` to `target`, replacing it atomically when it exists. Wraps rename(2).
  package static func move(_ path: String, to target: String) throws(FileCallError) {
    if Glibc.rename(path, target) != 0 { throw FileCallError(call: "rename", path: target, errno: .current) }
  }
}
