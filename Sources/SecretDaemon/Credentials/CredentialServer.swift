// systemd credentials from secretd: a unit with `LoadCredential=ID:%t/secretd/credentials` makes
// the service manager connect here when it starts the unit, from an abstract address naming the
// unit and the credential (`\0RANDOM/unit/UNIT/ID`). secretd checks that the peer runs as its own
// user and, where /proc tells, belongs to that unit, writes the secret and closes; with nothing
// to give it closes at once, which fails the unit's start, and says why in one line. The socket
// is served on a thread of its own: no request ever waits on, or holds up, the bus.
package import SystemCalls

/// Serves credential requests on one listening socket.
package final class CredentialServer: Sendable {
  /// The name systemd passes the socket unit's socket under (FileDescriptorName=).
  static let socketName = "credentials"
  /// Where the socket is, under the user's runtime directory.
  package static let relativePath = "secretd/credentials"
  /// A peer that does not read its credential within this many seconds is given up.
  static let sendTimeout = 2

  let socket: UnixSocket
  /// Where the socket is (the unit's LoadCredential= path).
  package let path: String
  private let daemon: Daemon

  private init(socket: UnixSocket, path: String, daemon: Daemon) {
    (self.socket, self.path, self.daemon) = (socket, path, daemon)
  }

  /// The socket the service manager passed (socket activation), else one made at
  /// `$XDG_RUNTIME_DIR/secretd/credentials`; nil, with why, when there can be none.
  package static func open(
    for daemon: Daemon, inherited: [(name: String, descriptor: FileDescriptor)], runtimeDirectory: String?
  ) -> Result<CredentialServer, CredentialSocketError> {
    let path = runtimeDirectory.map { "\($0)/\(relativePath)" } ?? relativePath
    if let passed = inherited.first(where: { $0.name == socketName }) {
      return .success(CredentialServer(socket: UnixSocket(descriptor: passed.descriptor), path: path, daemon: daemon))
    }
    guard let runtimeDirectory, !runtimeDirectory.isEmpty else { return .failure(.noRuntimeDirectory) }
    do throws(FileCallError) {
      try Files.makePrivateDirectory(Files.split(path).directory)
    } catch {
      return .failure(.cannotListen(path, "\(error.call): \(error.errno)"))
    }
    if UnixSocket.isListening(at: path) { return .failure(.taken(path)) }
    try? Files.remove(path)
    do throws(Errno) {
      let socket = try UnixSocket.listen(at: path, permissions: .ownerReadWrite)
      return .success(CredentialServer(socket: socket, path: path, daemon: daemon))
    } catch {
      return .failure(.cannotListen(path, "\(error)"))
    }
  }

  /// Serves requests, one at a time, on a thread of its own, until the process ends.
  package func start() {
    NativeThread.detach(name: "secretd-credentials") { [self] in
      while true {
        guard let connection = try? socket.accept() else { continue }
        answer(connection)
        connection.descriptor.close()
      }
    }
  }

  /// Answers one request: the secret, or nothing (the unit's start then fails), and one log line.
  private func answer(_ connection: UnixSocket) {
    guard let request = CredentialRequest(address: (try? connection.peerAddress()) ?? []) else {
      Log.warning("a connection to \(path) named no unit and credential: closed without an answer")
      return
    }
    let served = daemon.configuration.servedUser
    guard let peer = try? connection.peerCredentials(), peer.user == served else {
      Log.warning("\(request): the request does not come from uid \(served): refused")
      return
    }
    if let cgroup = ProcessCgroup(of: peer.process), !cgroup.belongs(to: request.unit) {
      Log.warning("\(request): pid \(peer.process) is not in \(request.unit) (\(cgroup.path)): refused")
      return
    }
    switch daemon.storeLock.reading({ daemon.store.credential(request.id, for: request.unit) }) {
    case .found(let secret):
      connection.limitSendTime(seconds: Self.sendTimeout)
      let sent = secret.withUnsafeBytes { bytes in
        Result { () throws(Errno) in try connection.descriptor.writeAll(bytes) }
      }
      switch sent {
      case .success: Log.info("\(request): given (\(secret.count) bytes)")
      case .failure(let error): Log.warning("\(request): could not be written (\(error))")
      }
    case .missing:
      Log.warning(
        "\(request): none stored; store it with `secretctl credential set \(request.id)` "
          + "(or `--unit \(request.unit)` for that unit only)")
    case .locked(let collection):
      Log.warning("\(request): the collection \(collection) holding it is locked; unlock it (`secretctl unlock`)")
    case .noMemory:
      Log.warning("\(request): no locked memory to copy it into")
    }
  }
}

/// Why secretd serves no credentials; it serves the Secret Service all the same.
package enum CredentialSocketError: Error, CustomStringConvertible {
  case noRuntimeDirectory
  case taken(String)
  case cannotListen(String, String)

  package var description: String {
    switch self {
    case .noRuntimeDirectory:
      "XDG_RUNTIME_DIR is not set: no credentials socket (systemd's LoadCredential= from secretd)"
    case .taken(let path): "\(path) is served by another process: secretd serves no credentials"
    case .cannotListen(let path, let reason):
      "cannot serve credentials at \(path) (\(reason)); under systemd, `systemctl --user enable --now secretd-credentials.socket`"
    }
  }
}

/// A unit's request for a credential, read off the address the service manager bound.
struct CredentialRequest: CustomStringConvertible {
  let unit: String
  let id: String

  /// Parses `\0RANDOM/unit/UNIT/ID`.
  init?(address: [UInt8]) {
    guard address.first == 0, let text = String(validating: address.dropFirst(), as: UTF8.self) else { return nil }
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[1] == "unit", !parts[2].isEmpty, !parts[3].isEmpty else { return nil }
    (unit, id) = (String(parts[2]), String(parts[3]))
  }

  var description: String { "credential \(id) for \(unit)" }
}

/// The control group a process belongs to (cgroup v2), as /proc says.
struct ProcessCgroup {
  let path: String

  /// nil when /proc does not tell: the process is gone, /proc hides it, or it is in the root
  /// group (no service manager sorts processes into units there).
  init?(of process: ProcessID) {
    guard let bytes = try? Files.read("/proc/\(process)/cgroup"),
      let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
      line != "0::/"
    else { return nil }
    path = String(line.dropFirst(3))
  }

  /// Whether the process is in `unit` (or a cgroup below it).
  func belongs(to unit: String) -> Bool { path.split(separator: "/").contains { $0 == unit } }
}
