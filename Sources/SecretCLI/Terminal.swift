import Glibc
import SecretClient

/// Where a command reads and writes: the three standard descriptors and the client to use.
public struct Console: Sendable {
  public var input: Int32
  public var output: Int32
  public var error: Int32
  /// The client commands use. It lives as long as the console, and the standard console as long
  /// as the process: secretctl then exits with its connection open, as secret-tool does, and the
  /// kernel closes it. Releasing the client first would close it synchronously (GDBus waits for
  /// its worker thread), which cost every command about half a millisecond before exit.
  private let secretClient: SecretClient

  public init(input: Int32 = 0, output: Int32 = 1, error: Int32 = 2) {
    self.input = input
    self.output = output
    self.error = error
    self.secretClient = SecretClient()
  }

  public static let standard = Console()

  var inputIsTerminal: Bool { Syscalls.isTerminal(input) }
  var outputIsTerminal: Bool { Syscalls.isTerminal(output) }

  /// A client of the session bus (or `SECRET_SERVICE_BUS_NAME`); connects on first use.
  func client() -> SecretClient { secretClient }

  /// Text on stdout, exactly as given.
  func print(_ text: String) {
    var text = text
    text.withUTF8 { _ = Syscalls.writeAll(output, UnsafeRawBufferPointer($0)) }
  }

  /// Raw bytes on stdout; false when stdout is gone (a closed pipe).
  @discardableResult
  func write(_ bytes: UnsafeRawBufferPointer) -> Bool { Syscalls.writeAll(output, bytes) }

  /// One line on stderr, prefixed with the program's name.
  func report(_ message: String) {
    var line = "secretctl: \(CLIError.oneLine(message))\n"
    line.withUTF8 { _ = Syscalls.writeAll(error, UnsafeRawBufferPointer($0)) }
  }
}

/// Asking for a secret on the terminal with echo off.
enum Terminal {
  /// Reads one line from the controlling terminal with echo off, after showing `prompt` there.
  /// The line's newline is not kept. The terminal's settings are restored afterwards, also when
  /// SIGINT, SIGTERM, SIGHUP or SIGQUIT end us mid-prompt.
  static func readSecret(prompt: String, into buffer: inout SecretBuffer) throws(CLIError) {
    guard let tty = Syscalls.openControllingTerminal() else {
      throw .usage("no terminal to ask on; pipe the secret on stdin instead (`printf %s \"$TOKEN\" | secretctl set …`)")
    }
    defer { Syscalls.close(tty) }
    var text = prompt
    let original = Syscalls.terminalSettings(tty)
    if let original {
      interruptedPrompt = (tty, original)
      let previous = signalsThatEndUs.map { ($0, Syscalls.handle($0, with: restoreTerminalAndExit)) }
      // Echo goes off before the prompt shows, so nothing typed after seeing it is echoed.
      Syscalls.applyTerminalSettings(Syscalls.withoutEcho(original), to: tty)
      text.withUTF8 { _ = Syscalls.writeAll(tty, UnsafeRawBufferPointer($0)) }
      defer {
        Syscalls.applyTerminalSettings(original, to: tty)
        previous.forEach { Syscalls.restore($0.0, $0.1) }
        interruptedPrompt = nil
      }
      try readLine(from: tty, into: &buffer)
    } else {
      text.withUTF8 { _ = Syscalls.writeAll(tty, UnsafeRawBufferPointer($0)) }
      try readLine(from: tty, into: &buffer)
    }
    // Echo was off, so the user's Enter did not move the cursor.
    _ = "\n".utf8.withContiguousStorageIfAvailable { Syscalls.writeAll(tty, UnsafeRawBufferPointer($0)) }
  }

  private static func readLine(from tty: Int32, into buffer: inout SecretBuffer) throws(CLIError) {
    var byte: UInt8 = 0
    while true {
      let got = withUnsafeMutableBytes(of: &byte) { Syscalls.read(tty, into: $0) }
      guard let got else { throw .service("cannot read from the terminal: \(Syscalls.errorText(Syscalls.lastError))") }
      if got == 0 {
        if buffer.count == 0 { throw .usage("no secret entered (end of input); nothing was stored") }
        return
      }
      if byte == UInt8(ascii: "\n") { break }
      buffer.append(byte)
    }
    if buffer.bytes.last == UInt8(ascii: "\r") { buffer.removeLast(1) }
    byte = 0
  }

  private static let signalsThatEndUs = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
}

/// The terminal and the settings to put back if a signal ends the process mid-prompt.
///
/// `nonisolated(unsafe)` is sound here: it is written only by the prompting thread, before the
/// signal handlers that read it are installed and after they are removed again (`sigaction` is
/// a system call, which orders the write before any delivery), and the CLI prompts from one
/// thread only; so a handler, on whichever thread it runs, never sees a write in progress.
nonisolated(unsafe) private var interruptedPrompt: (descriptor: Int32, settings: termios)?

/// A C signal handler: restore echo, then die of the signal as we would have.
private func restoreTerminalAndExit(_ signal: Int32) {
  if let (descriptor, settings) = interruptedPrompt {
    Syscalls.applyTerminalSettings(settings, to: descriptor)
  }
  Syscalls.raiseDefault(signal)
}
