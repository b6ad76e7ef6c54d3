import Foundation

/// gnome-keyring run as another Unix user (nobody, 65534) on a bus every user may join, owning
/// `org.freedesktop.secrets` before the test's own user starts a provider: what a process of
/// another user that takes the name first looks like to a client. Needs root (setpriv).
public final class ForeignProvider: Sendable {
  public static let user: UInt32 = 65534
  public let bus: PrivateBus
  private let process: ChildProcess
  private let home: URL

  public var pid: Int32 { process.pid }

  public init() throws {
    bus = try PrivateBus(everyUser: true)
    home = bus.directory.appending(path: "foreign-home")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    chown(home.path, Self.user, Self.user)
    let input = try ChildProcess.makePipe()
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    process = try ChildProcess(
      try resolveExecutable("setpriv"),
      [
        "--reuid=\(Self.user)", "--regid=\(Self.user)", "--clear-groups",
        try resolveExecutable("gnome-keyring-daemon").path,
        "--foreground", "--unlock", "--components=secrets",
      ],
      environment: Self.environment(bus: bus, home: home), stdin: input.read, stdout: null, stderr: null)
    close(input.read)
    _ = write(input.write, "foreign-password", 16)
    close(input.write)
    let wait = try runProcess(
      "gdbus", ["wait", "--address", bus.address, "--timeout", "20", "org.freedesktop.secrets"],
      environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
    guard wait.status == 0, process.isRunning else {
      stop()
      throw HarnessError("gnome-keyring did not start as uid \(Self.user) on \(bus.address)")
    }
  }

  deinit { stop() }

  /// The provider's own environment; its clients use it too, run as its user.
  public var environment: [String: String] { Self.environment(bus: bus, home: home) }

  private static func environment(bus: PrivateBus, home: URL) -> [String: String] {
    [
      "DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin", "HOME": home.path,
      "XDG_RUNTIME_DIR": home.path, "XDG_DATA_HOME": home.appending(path: "data").path, "LANG": "C.UTF-8",
    ]
  }

  /// Runs a client program as the provider's user (`secret-tool`, …) on its bus.
  public func runAsItsUser(_ executable: String, _ arguments: [String], input: [UInt8]? = nil) throws -> ProcessOutput {
    try runProcess(
      "setpriv",
      ["--reuid=\(Self.user)", "--regid=\(Self.user)", "--clear-groups", try resolveExecutable(executable).path]
        + arguments, input: input, environment: environment, in: home)
  }

  public func stop() {
    process.signal(SIGTERM)
    process.wait()
    bus.stop()
  }
}
