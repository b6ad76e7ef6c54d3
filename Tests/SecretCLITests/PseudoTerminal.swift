import Foundation
import SecretTestSupport

/// A child process whose controlling terminal is a pseudo-terminal the test drives, as a person
/// at a keyboard would: it reads what the child shows and types only after a prompt appears.
final class PseudoTerminalChild {
  let master: Int32
  private let child: ChildProcess
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
    child = try ChildProcess(
      URL(filePath: executable), arguments, environment: environment, controllingTerminal: "/dev/pts/\(number)")
  }

  deinit { close(master) }

  /// The child's process id.
  var pid: Int32 { child.pid }

  /// Everything the child wrote to its terminal so far, as text.
  var output: String { String(decoding: transcript, as: UTF8.self) }

  /// Reads the terminal until `text` has appeared, or throws after `seconds`.
  func waitFor(_ text: String, seconds: Double = 20) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !output.contains(text) {
      guard Date() < deadline else {
        throw HarnessError("no \"\(text)\" on the terminal; got \(output.debugDescription)")
      }
      guard readAvailable(timeoutMilliseconds: 100) else {
        throw HarnessError("the terminal closed; got \(output.debugDescription)")
      }
    }
  }

  func type(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
  }

  /// Waits for the child to exit, collecting its last output; returns its exit status.
  func wait() -> Int32 {
    // Read until the terminal closes, not until the child is reaped: a child that has exited
    // may still have output waiting in the terminal.
    let deadline = Date().addingTimeInterval(20)
    while readAvailable(timeoutMilliseconds: 100), Date() < deadline {}
    return child.wait()
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
}
