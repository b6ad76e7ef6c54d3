public import Foundation
public import SecretClient
import Synchronization

/// A Secret Service provider the tests can run against.
public enum Provider: String, Sendable, CaseIterable, CustomStringConvertible {
  case secretd
  case gnomeKeyring = "gnome-keyring"

  /// Every provider, for `@Test(arguments: Provider.all)`: one line runs a test against each.
  public static let all = Provider.allCases

  public var description: String { rawValue }
}

/// A provider running on a private bus with its own temporary HOME and XDG folders.
public final class ProviderInstance: Sendable {
  public let provider: Provider
  public let bus: PrivateBus
  /// The name the provider owns on `bus`.
  public let busName: String
  /// More command-line arguments for secretd (ignored for other providers).
  public let arguments: [String]
  /// More environment for the provider's process (not its clients'), such as an allocation counter.
  public let providerEnvironment: [String: String]
  /// The secretd binary to run (for `.secretd`), when not the one built here.
  public let secretd: URL?
  private let process = Mutex<ChildProcess?>(nil)

  public var busAddress: String { bus.address }

  init(
    provider: Provider, bus: PrivateBus, busName: String, arguments: [String] = [],
    providerEnvironment: [String: String] = [:], secretd: URL? = nil
  ) throws {
    self.provider = provider
    self.bus = bus
    self.busName = busName
    self.arguments = arguments
    self.providerEnvironment = providerEnvironment
    self.secretd = secretd
    for folder in ["home", "run", "data", "config", "cache"] {
      try FileManager.default.createDirectory(
        at: bus.directory.appending(path: folder), withIntermediateDirectories: true)
    }
    try startProvider()
  }

  /// The whole environment for a client subprocess: this bus, this HOME, nothing of the user's.
  public var environment: [String: String] {
    let inherited = ProcessInfo.processInfo.environment
    var environment = [
      "DBUS_SESSION_BUS_ADDRESS": bus.address,
      "HOME": folder("home"),
      "XDG_RUNTIME_DIR": folder("run"),
      "XDG_DATA_HOME": folder("data"),
      "XDG_CONFIG_HOME": folder("config"),
      "XDG_CACHE_HOME": folder("cache"),
      "PATH": inherited["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
      "LANG": "C.UTF-8",
    ]
    if busName != "org.freedesktop.secrets" { environment["SECRET_SERVICE_BUS_NAME"] = busName }
    return environment
  }

  /// A client of this provider.
  public func client() -> SecretClient {
    SecretClient(bus: .address(bus.address), busName: busName)
  }

  /// The provider's process id.
  public var pid: Int32 { process.withLock { $0?.pid ?? 0 } }

  /// Runs a client program (`secret-tool`, `git`, …) against this provider.
  public func run(_ executable: String, _ arguments: [String], input: [UInt8]? = nil) throws -> ProcessOutput {
    try runProcess(executable, arguments, input: input, environment: environment, in: bus.directory)
  }

  /// Freezes the provider (SIGSTOP) so that calls to it block; `resume()` thaws it.
  public func suspend() { kill(pid, SIGSTOP) }
  public func resume() { kill(pid, SIGCONT) }

  /// Starts the provider and waits until it owns its name on the bus.
  public func startProvider() throws {
    let log = bus.directory.appending(path: "\(provider).log")
    let logFile = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    guard logFile >= 0 else { throw HarnessError("cannot create the provider's log") }
    let input = try ChildProcess.makePipe()
    defer { close(logFile) }
    let (executable, arguments) = try command()
    let started = try ChildProcess(
      executable, arguments, environment: environment.merging(providerEnvironment) { $1 }, stdin: input.read,
      stdout: logFile, stderr: logFile)
    close(input.read)
    // gnome-keyring reads the login keyring's password until the end of its input.
    if provider == .gnomeKeyring { _ = write(input.write, "test-password", 13) }
    close(input.write)
    process.withLock { $0 = started }
    let wait = try run("gdbus", ["wait", "--session", "--timeout", "20", busName])
    guard wait.status == 0, started.isRunning else {
      let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
      throw HarnessError("\(provider) did not take \(busName) on \(bus.address): \(text)")
    }
  }

  private func command() throws -> (URL, [String]) {
    switch provider {
    case .gnomeKeyring:
      (try resolveExecutable("gnome-keyring-daemon"), ["--foreground", "--unlock", "--components=secrets"])
    case .secretd:
      (try secretd ?? secretdExecutable(), ["--address", bus.address, "--bus-name", busName] + arguments)
    }
  }

  /// Stops the provider (SIGTERM), waits for it to exit and for the bus to drop its name (the
  /// bus learns of the exit a moment later: a call sent meanwhile would get NoReply, not "no
  /// provider").
  public func stopProvider() {
    guard let running = process.withLock({ $0.take() }) else { return }
    running.signal(SIGCONT)
    running.signal(SIGTERM)
    running.wait()
    for _ in 0..<500 {
      let owned = try? run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
          "--method", "org.freedesktop.DBus.NameHasOwner", busName,
        ])
      if owned?.stdoutText.contains("false") ?? true { return }
    }
  }

  func stop() {
    stopProvider()
    bus.stop()
  }

  private func folder(_ name: String) -> String { bus.directory.appending(path: name).path }
}

/// Starts `provider` on a private bus, runs `body`, and tears both down even when `body` throws.
///
/// ```swift
/// @Test(arguments: Provider.all)
/// func roundTrip(provider: Provider) async throws {
///   try await withProvider(provider) { instance in
///     try await instance.client().write(SecretValue("x"), service: "s", account: "a")
///   }
/// }
/// ```
///
/// - Parameters:
///   - everyUser: a bus that processes of every user may join (a test runs clients as others).
///   - arguments: more command-line arguments for secretd.
///   - providerEnvironment: more environment for the provider's process.
///   - secretd: another secretd binary to run (a benchmark's previous build).
public func withProvider<T>(
  _ provider: Provider, busName: String = "org.freedesktop.secrets", everyUser: Bool = false, arguments: [String] = [],
  providerEnvironment: [String: String] = [:], secretd: URL? = nil, _ body: (ProviderInstance) async throws -> T
) async throws -> T {
  // Started on the calling thread: that spaces the starts out by the width of Swift's pool (all
  // started at once, on threads of their own, they used up the user's 128 inotify instances). A
  // test that needs the pool free while others run does its check in a process of its own.
  let instance = try ProviderInstance(
    provider: provider, bus: try PrivateBus(everyUser: everyUser), busName: busName, arguments: arguments,
    providerEnvironment: providerEnvironment, secretd: secretd)
  defer { instance.stop() }
  return try await body(instance)
}

/// A program built by this package beside the running test or benchmark binary.
public func builtExecutable(_ name: String) throws -> URL {
  let me = URL(
    filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
  )
  let candidate = me.deletingLastPathComponent().appending(path: name)
  guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
    throw HarnessError("\(name) is not built at \(candidate.path); run `swift build` first")
  }
  return candidate
}

/// The secretd to test: `$SECRETD` when set, else the one built beside the running binary.
func secretdExecutable() throws -> URL {
  if let given = ProcessInfo.processInfo.environment["SECRETD"] { return URL(filePath: given) }
  return try builtExecutable("secretd")
}
