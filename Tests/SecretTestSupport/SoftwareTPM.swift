// swtpm as the TPM 2.0 of a test: `swtpm socket --tpm2` on a state folder of its own, reached
// through tpm2-tss's TCTI `swtpm:path=SOCKET`. The harness binds and listens on the sockets
// itself and hands them to swtpm, so the TPM accepts from the moment it is started (no waiting
// for it to come up), and refuses connections once it is stopped.
public import Foundation
import Synchronization

/// A software TPM (swtpm) for one test. Its state folder holds its seeds: started again on the
/// same folder it is the same TPM; on another folder, another TPM.
public final class SoftwareTPM: Sendable {
  /// Where the TPM keeps its state.
  public let stateFolder: URL
  /// The data socket, in the state folder; swtpm's control socket is beside it (`.ctrl`),
  /// where the TCTI looks.
  public let socket: String
  private let process = Mutex<ChildProcess?>(nil)

  /// The TCTI configuration that names this TPM (secretd's `--tcti`).
  public var tcti: String { "swtpm:path=\(socket)" }

  /// Starts swtpm on `stateFolder`, made when missing.
  public init(stateFolder: URL) throws {
    self.stateFolder = stateFolder
    socket = stateFolder.appending(path: "tpm.sock").path
    try FileManager.default.createDirectory(at: stateFolder, withIntermediateDirectories: true)
    try start()
  }

  deinit { stop() }

  /// Starts the TPM (again, after ``stop()``), as a machine's TPM starts at boot (Startup(CLEAR)).
  public func start() throws {
    guard let executable = try? resolveExecutable("swtpm", path: "/usr/bin:/bin:/usr/local/bin") else {
      throw HarnessError("swtpm is not installed: `make bootstrap` installs it (Debian's swtpm and swtpm-tools)")
    }
    let data = try Self.listen(at: socket)
    defer { close(data) }
    let control = try Self.listen(at: socket + ".ctrl")
    defer { close(control) }
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    let started = try ChildProcess(
      executable,
      [
        "socket", "--tpm2", "--tpmstate", "dir=\(stateFolder.path)", "--server", "type=unixio,fd=3", "--ctrl",
        "type=unixio,fd=4", "--flags", "not-need-init,startup-clear",
      ],
      environment: [:], stdin: null, stdout: null, stderr: null, inheriting: [data, control])
    process.withLock { $0 = started }
  }

  /// Stops the TPM (SIGTERM) and waits for it to exit; connections are refused afterwards.
  public func stop() {
    guard let running = process.withLock({ $0.take() }) else { return }
    running.signal(SIGTERM)
    running.wait()
  }

  /// A socket listening at `path` (any stale one removed first), closed on exec: a child of
  /// another test must never hold it, or a stopped TPM would still accept connections.
  private static func listen(at path: String) throws -> Int32 {
    unlink(path)
    let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw HarnessError("cannot make a socket for swtpm") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      close(descriptor)
      throw HarnessError("\(path) is too long for a socket")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0, Glibc.listen(descriptor, 16) == 0 else {
      close(descriptor)
      throw HarnessError("cannot listen at \(path): \(String(cString: strerror(errno)))")
    }
    return descriptor
  }
}

/// Starts a software TPM on a new state folder, runs `body`, then stops it and removes its
/// folders, even when `body` throws. `body` may start other TPMs in the folder it is given.
public func withSoftwareTPM<T>(_ body: (SoftwareTPM, _ folder: URL) async throws -> T) async throws -> T {
  let folder = try makeTemporaryDirectory()
  defer { try? FileManager.default.removeItem(at: folder) }
  let tpm = try SoftwareTPM(stateFolder: folder.appending(path: "tpm"))
  defer { tpm.stop() }
  return try await body(tpm, folder)
}
