// Every libc call of the command line, as internal wrappers: the other files call only these.
import Glibc

enum Syscalls {
  static let standardInput: Int32 = 0
  static let standardOutput: Int32 = 1
  static let standardError: Int32 = 2

  /// Whether `descriptor` is a terminal. Wraps `isatty`.
  static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

  /// Writes every byte, retrying partial writes and interruptions; false on any other error
  /// (a closed pipe, a full disk). Wraps `write`.
  @discardableResult
  static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard var next = bytes.baseAddress else { return true }
    var left = bytes.count
    while left > 0 {
      let written = Glibc.write(descriptor, next, left)
      if written < 0 {
        if errno == EINTR { continue }
        return false
      }
      next += written
      left -= written
    }
    return true
  }

  /// Reads what is available, up to the buffer's size: the count, 0 at end of input, or
  /// `nil` on error. Retries interruptions. Wraps `read`.
  static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
    guard let base = buffer.baseAddress else { return 0 }
    while true {
      let count = Glibc.read(descriptor, base, buffer.count)
      if count >= 0 { return count }
      if errno != EINTR { return nil }
    }
  }

  /// The controlling terminal, opened for reading and writing, or `nil` when there is none.
  /// Wraps `open("/dev/tty")`.
  static func openControllingTerminal() -> Int32? {
    let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
    return descriptor >= 0 ? descriptor : nil
  }

  static func close(_ descriptor: Int32) { _ = Glibc.close(descriptor) }

  /// The terminal's settings. Wraps `tcgetattr`.
  static func terminalSettings(_ descriptor: Int32) -> termios? {
    var settings = termios()
    return tcgetattr(descriptor, &settings) == 0 ? settings : nil
  }

  /// Applies settings now, without discarding input already typed (or, under test, already
  /// written to the pseudo-terminal): `TCSANOW`, never `TCSAFLUSH`. Wraps `tcsetattr`.
  @discardableResult
  static func applyTerminalSettings(_ settings: termios, to descriptor: Int32) -> Bool {
    var settings = settings
    return tcsetattr(descriptor, TCSANOW, &settings) == 0
  }

  /// Settings with echo off and line editing kept.
  static func withoutEcho(_ settings: termios) -> termios {
    var quiet = settings
    quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
    return quiet
  }

  /// Overwrites memory with zeros in a way the optimiser may not remove. Wraps `explicit_bzero`.
  static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    explicit_bzero(base, buffer.count)
  }

  /// Sets one environment variable for this process and what it executes, from bytes without
  /// NUL; the terminated copy made for `setenv` is wiped. Wraps `setenv`.
  static func setEnvironment(_ name: String, _ value: [UInt8]) -> Bool {
    let terminated = UnsafeMutableBufferPointer<CChar>.allocate(capacity: value.count + 1)
    defer {
      wipe(UnsafeMutableRawBufferPointer(terminated))
      terminated.deallocate()
    }
    value.withUnsafeBytes { bytes in UnsafeMutableRawBufferPointer(terminated).copyMemory(from: bytes) }
    terminated[value.count] = 0
    guard let base = terminated.baseAddress else { return false }
    return setenv(name, base, 1) == 0
  }

  /// Replaces this process with `command`, found on PATH. Returns only on failure, with the
  /// errno. Wraps `execvp`.
  static func execute(_ command: String, _ arguments: [String]) -> Int32 {
    var argv: [UnsafeMutablePointer<CChar>?] = ([command] + arguments).map { strdup($0) }
    argv.append(nil)
    defer { argv.forEach { free($0) } }
    execvp(command, argv)
    return errno
  }

  /// The broken-down UTC time of `seconds` since 1970, or `nil` when out of range. Wraps `gmtime_r`.
  static func universalTime(_ seconds: Int64) -> tm? {
    var time = tm()
    var seconds = time_t(seconds)
    return gmtime_r(&seconds, &time) != nil ? time : nil
  }

  /// Seconds since 1970 now. Wraps `time`.
  static func now() -> Int64 { Int64(time(nil)) }

  static func errorText(_ number: Int32) -> String {
    strerror(number).map { String(cString: $0) } ?? "error \(number)"
  }

  static var lastError: Int32 { errno }

  /// Whether an `execvp` failure means the command does not exist (env(1) exits 127 for it).
  static func meansNotFound(_ number: Int32) -> Bool { number == ENOENT || number == ENOTDIR }

  /// Restores the default action for `signal` and raises it, so that we end as the signal says.
  static func raiseDefault(_ signal: Int32) {
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
  }

  /// Installs a plain C handler for `signal`. Wraps `sigaction`.
  static func handle(_ signal: Int32, with handler: @convention(c) (Int32) -> Void) -> sigaction {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = handler
    sigemptyset(&action.sa_mask)
    var previous = sigaction()
    sigaction(signal, &action, &previous)
    return previous
  }

  static func restore(_ signal: Int32, _ previous: sigaction) {
    var previous = previous
    sigaction(signal, &previous, nil)
  }
}
