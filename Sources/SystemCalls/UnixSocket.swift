// AF_UNIX stream sockets: listening at a path, accepting, and what the kernel says of a peer
// (its address and its credentials).
import CSystemCalls
import Glibc

/// A listening or connected AF_UNIX stream socket.
package struct UnixSocket: Sendable {
  package let descriptor: FileDescriptor

  package init(descriptor: FileDescriptor) { self.descriptor = descriptor }

  /// What the kernel vouches for about the process at the other end when it connected.
  package struct PeerCredentials: Sendable, Equatable {
    package let process: ProcessID
    package let user: UserID
  }

  /// A socket listening at `path` (which must not exist), with `permissions`. Closes on exec.
  /// Wraps socket(2), bind(2), chmod(2) and listen(2).
  package static func listen(at path: String, permissions: FilePermissions) throws(Errno) -> UnixSocket {
    let raw = try retryingOnInterrupt {
      Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }
    let socket = UnixSocket(descriptor: FileDescriptor(rawValue: raw))
    do throws(Errno) {
      var address = try Self.address(path)
      _ = try retryingOnInterrupt {
        withUnsafePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(raw, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
          }
        }
      }
      _ = try retryingOnInterrupt { chmod(path, mode_t(permissions.rawValue)) }
      _ = try retryingOnInterrupt { Glibc.listen(raw, 16) }
      return socket
    } catch {
      socket.descriptor.close()
      throw error
    }
  }

  /// Whether something listens at `path` now. Wraps socket(2) and connect(2).
  package static func isListening(at path: String) -> Bool {
    guard var address = try? Self.address(path) else { return false }
    let raw = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard raw >= 0 else { return false }
    defer { Glibc.close(raw) }
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(raw, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    } == 0
  }

  private static func address(_ path: String) throws(Errno) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .invalidArgument }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    return address
  }

  /// The next connection; blocks until one comes. Wraps accept4(2) with SOCK_CLOEXEC.
  package func accept() throws(Errno) -> UnixSocket {
    UnixSocket(
      descriptor: FileDescriptor(rawValue: try retryingOnInterrupt { secretd_accept_cloexec(descriptor.rawValue) }))
  }

  /// The address the peer bound, as its bytes (an abstract address starts with a zero byte).
  /// Wraps getpeername(2).
  package func peerAddress() throws(Errno) -> [UInt8] {
    var address = sockaddr_un()
    var length = socklen_t(MemoryLayout<sockaddr_un>.size)
    _ = try retryingOnInterrupt {
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor.rawValue, $0, &length) }
      }
    }
    let pathLength = max(0, Int(length) - MemoryLayout<sa_family_t>.size)
    return withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(pathLength)) }
  }

  /// The peer's process and user when it connected. Wraps getsockopt(2) with SO_PEERCRED.
  package func peerCredentials() throws(Errno) -> PeerCredentials {
    var (pid, uid): (Int32, UInt32) = (0, 0)
    _ = try retryingOnInterrupt { secretd_peer_credentials(descriptor.rawValue, &pid, &uid) }
    return PeerCredentials(process: ProcessID(rawValue: pid), user: UserID(rawValue: uid))
  }

  /// Sends every byte of `bytes`, unless `deadline` passes first (a peer that does not read).
  /// Wraps setsockopt(2) with SO_SNDTIMEO and send(2) with MSG_NOSIGNAL.
  package func send(_ bytes: UnsafeRawBufferPointer, before deadline: ContinuousClock.Instant) throws(Errno) {
    guard let base = bytes.baseAddress else { return }
    var sent = 0
    while sent < bytes.count {
      let left = deadline - .now
      guard left > .zero else { throw .timedOut }
      limitSendTime(left)
      let count = Glibc.send(descriptor.rawValue, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
      if count >= 0 {
        sent += count
      } else if errno != EINTR && errno != EAGAIN {
        throw .current
      }
    }
  }

  private func limitSendTime(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var timeout = timeval(tv_sec: Int(seconds), tv_usec: max(1, Int(attoseconds / 1_000_000_000_000)))
    _ = setsockopt(descriptor.rawValue, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }
}
