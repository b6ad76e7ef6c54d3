public import Foundation
import Synchronization

/// The service manager's end of `$NOTIFY_SOCKET`, as systemd keeps it for a unit: the messages
/// its process sends, in order, and its file descriptor store (a descriptor sent with
/// `FDSTORE=1` and `FDNAME=NAME` is kept under that name until `FDSTOREREMOVE=1` names it).
public final class NotifySocket: Sendable {
  public let path: String
  private let socket: Int32
  private struct State {
    var messages: [String] = []
    var store: [String: Int32] = [:]
  }
  private let state = Mutex(State())

  public init(in folder: URL) throws {
    path = folder.appending(path: "notify").path
    socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { bytes in
      for (index, byte) in path.utf8.enumerated() where index < bytes.count - 1 { bytes[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard socket >= 0, bound == 0 else { throw HarnessError("cannot bind \(path): errno \(errno)") }
  }

  deinit {
    close(socket)
    state.withLock { $0.store.values.forEach { close($0) } }
  }

  /// Every message received so far, in order.
  public var received: [String] {
    receiveWaiting()
    return state.withLock { $0.messages }
  }

  /// The descriptor kept under `name`, if any; it stays the store's (not to be closed).
  public func stored(_ name: String) -> Int32? {
    receiveWaiting()
    return state.withLock { $0.store[name] }
  }

  /// Waits until a message that `satisfies` arrives, at most `timeout` seconds; false if none did.
  public func wait(seconds timeout: Double, for satisfies: (String) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if received.contains(where: satisfies) { return true }
      let left = deadline.timeIntervalSinceNow
      guard left > 0 else { return false }
      var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      _ = poll(&ready, 1, Int32(left * 1000) + 1)
    }
  }

  private func receiveWaiting() {
    while let (message, descriptors) = receive() { keep(message, descriptors) }
  }

  /// One waiting datagram and the descriptors sent with it (recvmsg(2), SCM_RIGHTS: one control
  /// message, as sd_notify sends), or nil when none waits.
  private func receive() -> (String, [Int32])? {
    var waiting = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    guard poll(&waiting, 1, 0) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let headerSize = MemoryLayout<cmsghdr>.size
    var control = [UInt8](repeating: 0, count: headerSize + 16 * MemoryLayout<Int32>.size)
    let length = buffer.withUnsafeMutableBytes { bytes in
      control.withUnsafeMutableBytes { control in
        var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
        return withUnsafeMutablePointer(to: &vector) { vector in
          var message = msghdr(
            msg_name: nil, msg_namelen: 0, msg_iov: vector, msg_iovlen: 1, msg_control: control.baseAddress,
            msg_controllen: control.count, msg_flags: 0)
          return recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
        }
      }
    }
    guard length >= 0 else { return nil }
    let header = control.withUnsafeBytes { $0.loadUnaligned(as: cmsghdr.self) }
    var descriptors: [Int32] = []
    if header.cmsg_level == SOL_SOCKET, header.cmsg_type == SCM_RIGHTS, header.cmsg_len > headerSize {
      let count = (header.cmsg_len - headerSize) / MemoryLayout<Int32>.size
      descriptors = control.withUnsafeBytes { bytes in
        (0..<count).map { bytes.loadUnaligned(fromByteOffset: headerSize + $0 * 4, as: Int32.self) }
      }
    }
    return (String(decoding: buffer[0..<length], as: UTF8.self), descriptors)
  }

  private func keep(_ message: String, _ descriptors: [Int32]) {
    let fields = Dictionary(
      message.split(separator: "\n").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
        .filter { $0.count == 2 }.map { ($0[0], $0[1]) }
    ) { $1 }
    state.withLock { state in
      state.messages.append(message)
      let name = fields["FDNAME"] ?? "stored"
      if fields["FDSTOREREMOVE"] == "1", let removed = state.store.removeValue(forKey: name) { close(removed) }
      if fields["FDSTORE"] == "1", let descriptor = descriptors.first {
        if let replaced = state.store.updateValue(descriptor, forKey: name) { close(replaced) }
        descriptors.dropFirst().forEach { close($0) }
      } else {
        descriptors.forEach { close($0) }
      }
    }
  }
}
