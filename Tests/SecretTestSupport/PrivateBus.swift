public import Foundation

/// A `dbus-daemon` of our own, in a temporary folder. It activates only the services a test
/// asks for; otherwise a name is owned only by a provider that the harness started. The user's
/// session bus is never touched.
public final class PrivateBus: Sendable {
  public let address: String
  /// A temporary folder for this bus and everything started on it; removed on `stop()`.
  public let directory: URL
  private let daemon: ChildProcess

  /// - Parameters:
  ///   - activatable: D-Bus service files to install, by bus name: the `Exec=` command that the
  ///     bus runs when a message is sent to that name while nobody owns it.
  ///   - everyUser: let processes of any user connect (the folder becomes world-readable), for
  ///     a test that runs a provider as another user.
  public init(activatable: [String: String] = [:], everyUser: Bool = false) throws {
    directory = try makeTemporaryDirectory()
    if everyUser { chmod(directory.path, 0o755) }
    // Only a bus that activates anything gets a service folder: dbus-daemon watches it with an
    // inotify instance, and a user may have only 128 of those (tests run many buses at once).
    var services: URL?
    if !activatable.isEmpty {
      let folder = directory.appending(path: "services")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for (name, command) in activatable {
        try "[D-BUS Service]\nName=\(name)\nExec=\(command)\n"
          .write(to: folder.appending(path: "\(name).service"), atomically: true, encoding: .utf8)
      }
      services = folder
    }
    let config = directory.appending(path: "bus.conf")
    try Self.configuration(
      socket: directory.appending(path: "bus").path, services: services?.path, everyUser: everyUser
    )
    .write(to: config, atomically: true, encoding: .utf8)
    let output = try ChildProcess.makePipe()
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    daemon = try ChildProcess(
      try resolveExecutable("dbus-daemon"), ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
      environment: [:], stdin: null, stdout: output.write, stderr: null)
    let reader = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
    close(output.write)
    address = try Self.readLine(reader)
  }

  deinit { stop() }

  /// Stops the bus daemon and removes the folder. Safe to call more than once.
  public func stop() {
    daemon.signal(SIGTERM)
    daemon.wait()
    try? FileManager.default.removeItem(at: directory)
  }

  private static func readLine(_ handle: FileHandle) throws -> String {
    var bytes: [UInt8] = []
    while !bytes.contains(UInt8(ascii: "\n")) {
      let chunk = handle.availableData
      guard !chunk.isEmpty else { throw HarnessError("dbus-daemon exited before printing its address") }
      bytes += chunk
    }
    return String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
  }

  private static func configuration(socket: String, services: String?, everyUser: Bool) -> String {
    """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:path=\(socket)</listen>
      <auth>EXTERNAL</auth>
      \(services.map { "<servicedir>\($0)</servicedir>" } ?? "")
      <policy context="default">\(everyUser ? "\n    <allow user=\"*\"/>" : "")
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
      <limit name="max_message_size">67108864</limit>
    </busconfig>
    """
  }
}

public func makeTemporaryDirectory() throws -> URL {
  var template = Array("/tmp/secrets-test-XXXXXX".utf8CString)
  guard let path = mkdtemp(&template) else { throw HarnessError("cannot create a folder in /tmp") }
  return URL(filePath: String(cString: path))
}
