public import Foundation

/// What a finished subprocess left behind.
public struct ProcessOutput: Sendable {
  /// The process id it ran under: a program that `exec`s keeps it.
  public var pid: pid_t
  public var status: Int32
  public var stdout: [UInt8]
  public var stderr: [UInt8]

  public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
  public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// The test runner's environment without any session bus: what a child that needs no bus gets,
/// so that nothing a test starts can reach a bus other than the private ones the harness runs
/// (a child that needs one is given its address explicitly).
public var environmentWithoutBus: [String: String] {
  var environment = ProcessInfo.processInfo.environment
  environment["DBUS_SESSION_BUS_ADDRESS"] = nil
  environment["DBUS_STARTER_ADDRESS"] = nil
  return environment
}

/// Runs a program to completion with `environment` as its whole environment.
///
/// Input and output go through files, not pipes, so a chatty child can never dead-lock against
/// us. `executable` is looked up on the environment's `PATH` unless it contains a slash.
public func runProcess(
  _ executable: String, _ arguments: [String], input: [UInt8]? = nil, environment: [String: String],
  in directory: URL
) throws -> ProcessOutput {
  let id = UUID().uuidString
  let paths = ["stdin", "stdout", "stderr"].map { directory.appending(path: "\($0)-\(id)").path }
  defer { paths.forEach { unlink($0) } }
  try Data(input ?? []).write(to: URL(filePath: paths[0]))
  let descriptors = [
    open(paths[0], O_RDONLY | O_CLOEXEC), open(paths[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0o600),
    open(paths[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0o600),
  ]
  defer { descriptors.forEach { close($0) } }
  guard !descriptors.contains(-1) else { throw HarnessError("cannot create files in \(directory.path)") }
  let child = try ChildProcess(
    try resolveExecutable(executable, path: environment["PATH"]), arguments, environment: environment,
    stdin: descriptors[0], stdout: descriptors[1], stderr: descriptors[2])
  let status = child.wait()
  return ProcessOutput(
    pid: child.pid, status: status,
    stdout: Array(try Data(contentsOf: URL(filePath: paths[1]))),
    stderr: Array(try Data(contentsOf: URL(filePath: paths[2]))))
}

/// `runProcess` awaited on a thread of its own: for programs that run for seconds or minutes
/// (packaging, a shell session, a python suite), which must never hold one of Swift's few pool
/// threads while other tests' deadlines wait for one.
public func runProcessOnOwnThread(
  _ executable: String, _ arguments: [String], input: [UInt8]? = nil, environment: [String: String],
  in directory: URL
) async throws -> ProcessOutput {
  try await onOwnThread {
    try runProcess(executable, arguments, input: input, environment: environment, in: directory)
  }
}

/// Runs blocking `body` on a thread of its own and awaits it, so that long waits (a whole python
/// suite, `concurrentPerform`) never hold one of Swift's few pool threads, which other tests'
/// deadlines need.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}

/// Finds `name` on `path` (or the process's PATH) the way a shell would.
public func resolveExecutable(_ name: String, path: String? = nil) throws -> URL {
  if name.contains("/") { return URL(filePath: name) }
  let directories = (path ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
  for directory in directories {
    let candidate = URL(filePath: String(directory)).appending(path: name)
    if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
  }
  throw HarnessError("\(name) is not installed; run scripts/bootstrap")
}

/// A failure of the test harness itself, with what to do about it.
public struct HarnessError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}
