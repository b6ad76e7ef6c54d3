// systemd credentials from secretd: a unit with `LoadCredential=ID:%t/secretd/credentials` makes
// the service manager connect here when it starts the unit, from an abstract address naming the
// unit and the credential (`\0RANDOM/unit/UNIT/ID`). secretd checks that the peer runs as its own
// user and in that unit (UnitCheck), writes the secret and closes; with nothing to give it
// closes at once (the unit then reads an empty credential, which the ExecStartPre= of
// `secretctl credential drop-in` refuses) and says why in one line. Requests are answered on
// threads of their own, each within a deadline: none waits on, or holds up, the bus or another
// unit's request.
package import SystemCalls

/// Serves credential requests on one listening socket.
package final class CredentialServer: Sendable {
  /// The name systemd passes the socket unit's socket under (FileDescriptorName=).
  static let socketName = "credentials"
  /// Where the socket is, under the user's runtime directory.
  package static let relativePath = "secretd/credentials"
  /// A peer that has not read its credential by then is given up.
  static let deadline = Duration.seconds(1)
  /// Requests answered at once; a request beyond them waits for one to end.
  static let concurrentRequests = 32

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

  /// Accepts requests on a thread of its own, until the process ends, and answers each on
  /// another.
  package func start() {
    let slots = NativeSemaphore(value: UInt32(Self.concurrentRequests))
    NativeThread.detach(name: "secretd-creds") { [self] in
      while true {
        slots.wait()
        guard let connection = try? socket.accept() else {
          slots.signal()
          continue
        }
        NativeThread.detach(name: "secretd-cred") { [self] in
          answer(connection, before: .now + Self.deadline)
          connection.descriptor.close()
          slots.signal()
        }
      }
    }
  }

  /// Answers one request: the secret, or nothing (the unit's start then fails), and one log line.
  private func answer(_ connection: UnixSocket, before deadline: ContinuousClock.Instant) {
    guard let request = CredentialRequest(address: (try? connection.peerAddress()) ?? []) else {
      Log.warning("a connection to \(path) named no unit and credential: closed without an answer")
      return
    }
    let served = daemon.configuration.servedUser
    guard let peer = try? connection.peerCredentials(), peer.user == served else {
      Log.warning("\(request): the request does not come from uid \(served): refused")
      return
    }
    if let refusal = UnitCheck.refusal(of: peer.process, at: connection, for: request.unit) {
      Log.warning("\(request): pid \(peer.process) is not shown to run in \(request.unit): \(refusal): refused")
      return
    }
    switch daemon.storeLock.reading({ daemon.store.credential(request.id, for: request.unit) }) {
    case .found(let secret):
      let sent = secret.withUnsafeBytes { bytes in
        Result { () throws(Errno) in try connection.send(bytes, before: deadline) }
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
      Log.warning(
        "\(request): the collection \(ObjectPaths.collection(collection)) holding it is locked; unlock it "
          + "(`secretctl unlock`)")
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
