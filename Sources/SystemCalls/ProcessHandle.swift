// A process pinned by a pidfd: its pid cannot come to name another process while the handle is
// open, so what /proc says under that pid, read while the process still runs, is about it.
import CSystemCalls
import Glibc

/// A running process, held by a pidfd, or by its start time where the kernel has no pidfds.
package struct ProcessHandle: ~Copyable {
  package let process: ProcessID
  private let pidfd: FileDescriptor?
  private let startTime: Substring?

  /// The process at the other end of `connection`: the one that connected (SO_PEERPIDFD) where
  /// the kernel tells, else the one that now has the pid it connected with. nil when it is gone.
  package init?(peerOf connection: UnixSocket, process: ProcessID) {
    let peer = secretd_peer_pidfd(connection.descriptor.rawValue)
    guard peer < 0 else {
      self.init(process, pidfd: FileDescriptor(rawValue: peer), startTime: nil)
      return
    }
    self.init(of: process)
  }

  /// `process`, while it runs (not a child of ours, such as a daemon that forked). nil when it
  /// is gone.
  package init?(of process: ProcessID) {
    let opened = secretd_pidfd_open(process.rawValue)
    if opened >= 0 {
      self.init(process, pidfd: FileDescriptor(rawValue: opened), startTime: nil)
    } else if errno == ENOSYS, let started = Self.startTime(of: process) {
      self.init(process, pidfd: nil, startTime: started)
    } else {
      return nil
    }
  }

  private init(_ process: ProcessID, pidfd: FileDescriptor?, startTime: Substring?) {
    (self.process, self.pidfd, self.startTime) = (process, pidfd, startTime)
  }

  deinit { pidfd?.close() }

  /// Waits until the process has exited, at most `milliseconds`; whether it has. Wraps poll(2)
  /// on the pidfd; without one, looks again every 10 ms.
  package func waitForExit(milliseconds: Int32) -> Bool {
    if let pidfd {
      var polled = pollfd(fd: pidfd.rawValue, events: Int16(POLLIN), revents: 0)
      return poll(&polled, 1, milliseconds) == 1
    }
    for _ in 0..<max(1, milliseconds / 10) where isRunning { usleep(10_000) }
    return !isRunning
  }

  /// Whether the process still runs, so that its pid still names it. Wraps poll(2) on the pidfd
  /// (readable once the process has exited), or compares /proc/PID/stat's start time.
  package var isRunning: Bool {
    if let pidfd {
      var polled = pollfd(fd: pidfd.rawValue, events: Int16(POLLIN), revents: 0)
      return poll(&polled, 1, 0) == 0
    }
    return startTime != nil && Self.startTime(of: process) == startTime
  }

  /// Field 22 of /proc/PID/stat, after the command name (which may hold spaces or parentheses).
  private static func startTime(of process: ProcessID) -> Substring? {
    guard let bytes = try? Files.read("/proc/\(process)/stat") else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let end = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: end)...].split(separator: " ")
    return fields.count > 19 ? fields[19] : nil
  }
}
