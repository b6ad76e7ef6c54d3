// Starting a program as a child, with its output going where the caller says, and waiting for it.
import Glibc

/// Starts `program` (looked for on `PATH` when it has no slash) with `arguments` (the first is
/// its name) and this process's environment, its standard output and error going to `output`
/// and `error`. Wraps posix_spawnp(3).
package func spawn(
  _ program: String, arguments: [String], output: FileDescriptor, error: FileDescriptor
) throws(Errno) -> ProcessID {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_adddup2(&actions, output.rawValue, STDOUT_FILENO)
  posix_spawn_file_actions_adddup2(&actions, error.rawValue, STDERR_FILENO)
  var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
  defer { argv.forEach { free($0) } }
  var pid: pid_t = 0
  let result = posix_spawnp(&pid, program, &actions, nil, &argv, environ)
  guard result == 0 else { throw Errno(code: result) }
  return ProcessID(rawValue: pid)
}

/// How a child started with ``launch(_:arguments:input:output:error:newSession:)`` is set up.
package struct LaunchedStreams {
  package var input: FileDescriptor
  package var output: FileDescriptor
  package var error: FileDescriptor

  package init(input: FileDescriptor, output: FileDescriptor, error: FileDescriptor) {
    (self.input, self.output, self.error) = (input, output, error)
  }
}

/// Starts `program` (looked for on `PATH` when it has no slash) with `arguments` (the first is
/// its name), this process's environment and `streams`, with every signal at its default and
/// unblocked; in a session of its own (no controlling terminal, out of the terminal's process
/// group) when `newSession`. Wraps posix_spawnp(3).
package func launch(
  _ program: String, arguments: [String], streams: LaunchedStreams, newSession: Bool = false
) throws(Errno) -> ProcessID {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_adddup2(&actions, streams.input.rawValue, STDIN_FILENO)
  posix_spawn_file_actions_adddup2(&actions, streams.output.rawValue, STDOUT_FILENO)
  posix_spawn_file_actions_adddup2(&actions, streams.error.rawValue, STDERR_FILENO)
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var none = sigset_t()
  sigemptyset(&none)
  var all = sigset_t()
  sigfillset(&all)
  posix_spawnattr_setsigmask(&attributes, &none)
  posix_spawnattr_setsigdefault(&attributes, &all)
  let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc 2.26 and later), not exported to Swift.
  posix_spawnattr_setflags(
    &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (newSession ? setsid : 0)))
  var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
  defer { argv.forEach { free($0) } }
  var pid: pid_t = 0
  let result = posix_spawnp(&pid, program, &actions, &attributes, &argv, environ)
  guard result == 0 else { throw Errno(code: result) }
  return ProcessID(rawValue: pid)
}

extension ProcessID {
  /// The child's exit status if it has ended (and is then reaped), else nil. Wraps waitpid(2)
  /// with WNOHANG.
  package func exitStatusIfEnded() -> ExitStatus? {
    var status: CInt = 0
    guard waitpid(rawValue, &status, WNOHANG) == rawValue else { return nil }
    let signal = status & 0x7f
    return ExitStatus(rawValue: signal == 0 ? (status >> 8) & 0xff : 128 + signal)
  }

  /// Whether a process of this id exists (any process, child or not). Wraps kill(2) with 0.
  package var exists: Bool { Glibc.kill(rawValue, 0) == 0 || errno == EPERM }

  /// Waits for the child to end; a child killed by a signal gives 128 + the signal's number, as
  /// a shell reports it. Wraps waitpid(2).
  package func waitForExit() throws(Errno) -> ExitStatus {
    var status: CInt = 0
    _ = try retryingOnInterrupt { waitpid(rawValue, &status, 0) }
    let signal = status & 0x7f
    return ExitStatus(rawValue: signal == 0 ? (status >> 8) & 0xff : 128 + signal)
  }
}

extension FileDescriptor {
  /// Waits until at least one of `descriptors` can be read or has reached its end, and returns
  /// those. Wraps poll(2).
  package static func poll(_ descriptors: [FileDescriptor]) throws(Errno) -> [FileDescriptor] {
    var entries = descriptors.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
    _ = try retryingOnInterrupt { Glibc.poll(&entries, nfds_t(entries.count), -1) }
    return zip(descriptors, entries).filter { $0.1.revents != 0 }.map(\.0)
  }
}
