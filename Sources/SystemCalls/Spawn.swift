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

extension ProcessID {
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
