import Foundation
import SecretTestSupport

/// A child process whose controlling terminal is a pseudo-terminal the test drives, as a person
/// at a keyboard would: it reads what the child shows and types only after a prompt appears.
final class PseudoTerminalChild {
  let master: Int32
  let pid: pid_t
  private var transcript: [UInt8] = []

  init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
    // posix_openpt, unlockpt and ptsname are not exported to Swift; this is what they do on
    // Linux. O_CLOEXEC at open, so that no child of a concurrent test inherits the master.
    master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    var unlock: Int32 = 0
    var number: Int32 = -1
    let setLock: UInt = 0x4004_5431  // TIOCSPTLCK
    let getNumber: UInt = 0x8004_5430  // TIOCGPTN
    guard master >= 0, ioctl(master, setLock, &unlock) == 0, ioctl(master, getNumber, &number) == 0 else {
      throw HarnessError("cannot open a pseudo-terminal")
    }
    let terminal = "/dev/pts/\(number)"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // Opened in the child after setsid, so the terminal becomes its controlling terminal.
    posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0)
    posix_spawn_file_actions_adddup2(&actions, 0, 1)
    posix_spawn_file_actions_adddup2(&actions, 0, 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc ≥ 2.26), not exported to Swift.
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setsid))
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    guard result == 0 else { throw HarnessError("cannot start \(executable) on a pseudo-terminal") }
    self.pid = pid
  }

  deinit { close(master) }

  /// Everything the child wrote to its terminal so far, as text.
  var output: String { String(decoding: transcript, as: UTF8.self) }

  /// Reads the terminal until `text` has appeared, or throws after `seconds`.
  func waitFor(_ text: String, seconds: Double = 20) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !output.contains(text) {
      guard Date() < deadline else { throw HarnessError("no \"\(text)\" on the terminal; got \(output.debugDescription)") }
      guard readAvailable(timeoutMilliseconds: 100) else { throw HarnessError("the terminal closed; got \(output.debugDescription)") }
    }
  }

  func type(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
  }

  /// Waits for the child to exit, collecting its last output; returns its exit status.
  func wait() -> Int32 {
    while readAvailable(timeoutMilliseconds: 100) {
      var raw: Int32 = 0
      if waitpid(pid, &raw, WNOHANG) == pid { return Self.status(raw) }
    }
    var raw: Int32 = 0
    while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
    return Self.status(raw)
  }

  /// False once the terminal has closed (the child and its descendants have gone).
  private func readAvailable(timeoutMilliseconds: Int32) -> Bool {
    var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, timeoutMilliseconds) >= 0 else { return errno == EINTR }
    if poller.revents == 0 { return true }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = read(master, &buffer, buffer.count)
    guard count > 0 else { return false }
    transcript += buffer[..<count]
    return true
  }

  private static func status(_ raw: Int32) -> Int32 {
    let signal = raw & 0x7f
    return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
  }
}
