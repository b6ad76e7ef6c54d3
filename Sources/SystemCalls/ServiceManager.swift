// The service manager's protocol (systemd's sd_notify and socket activation), spoken without
// libsystemd: state and descriptors sent on $NOTIFY_SOCKET, descriptors received as
// LISTEN_FDS/LISTEN_FDNAMES.
import CSystemCalls
import Glibc

package enum ServiceManager {
  /// Whether a service manager listens for notifications ($NOTIFY_SOCKET is set).
  package static var isListening: Bool { notifySocket != nil }

  private static var notifySocket: String? {
    guard let value = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !value.isEmpty else { return nil }
    return value
  }

  /// Tells the service manager `state` (lines such as `READY=1`, `FDSTORE=1`, `FDNAME=store`),
  /// handing it `descriptors` too. Does nothing without a manager. Wraps socket(2) and sendmsg(2).
  package static func notify(_ state: String, descriptors: [FileDescriptor] = []) throws(Errno) {
    guard let address = notifySocket else { return }
    let socket = try retryingOnInterrupt {
      Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }
    defer { _ = close(socket) }
    let raw = descriptors.map(\.rawValue)
    var text = state
    _ = try text.withUTF8 { bytes in
      Result { () throws(Errno) in
        try retryingOnInterrupt {
          raw.withUnsafeBufferPointer { fds in
            secretd_send_with_fds(socket, address, bytes.baseAddress, bytes.count, fds.baseAddress, Int32(fds.count))
          }
        }
      }
    }.get()
  }

  /// The descriptors the service manager passed this process, by name (LISTEN_FDNAMES, or
  /// "unknown"), starting at 3. Taken once: the variables are removed so that no child
  /// believes they are its own, and each descriptor closes on exec.
  package static func takeInheritedDescriptors() -> [(name: String, descriptor: FileDescriptor)] {
    defer {
      for variable in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(variable) }
    }
    guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
      let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count > 0
    else { return [] }
    let names =
      getenv("LISTEN_FDNAMES").map { String(cString: $0).split(separator: ":", omittingEmptySubsequences: false) } ?? []
    return (0..<count).map { index in
      let descriptor = FileDescriptor(rawValue: 3 + CInt(index))
      _ = fcntl(descriptor.rawValue, F_SETFD, FD_CLOEXEC)
      return (index < names.count ? String(names[index]) : "unknown", descriptor)
    }
  }
}
