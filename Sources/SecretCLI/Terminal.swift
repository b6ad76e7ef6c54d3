import SecretClient
package import SystemCalls

/// Where a command reads and writes: the three standard descriptors and the client to use.
package struct Console: Sendable {
  package var input: FileDescriptor
  package var output: FileDescriptor
  package var error: FileDescriptor
  /// The client commands use. It lives as long as the console, and the standard console as long
  /// as the process: secretctl then exits with its connection open, as secret-tool does, and the
  /// kernel closes it. Releasing the client first would close it synchronously (GDBus waits for
  /// its worker thread), which cost every command about half a millisecond before exit.
  private var secretClient: SecretClient
  /// OpenBao, in secretctl-bao; nil in secretctl, whose commands that need it are handed over.
  package var openBao: (any OpenBaoAccess)?
  /// Whether a command that needs OpenBao replaces this process with secretctl-bao (the real
  /// program's console; never a test's).
  package var handsOffToOpenBao = false

  package init(
    input: FileDescriptor = .standardInput, output: FileDescriptor = .standardOutput,
    error: FileDescriptor = .standardError
  ) {
    self.input = input
    self.output = output
    self.error = error
    self.secretClient = SecretClient()
  }

  package static let standard: Console = {
    var console = Console()
    console.handsOffToOpenBao = true
    return console
  }()

  var inputIsTerminal: Bool { input.isTerminal }
  var outputIsTerminal: Bool { output.isTerminal }

  /// A client of the session bus (or `SECRET_SERVICE_BUS_NAME`); connects on first use.
  func client() -> SecretClient { secretClient }

  /// Lets the client use a provider that offers only plain transfer (`--allow-plain-transfer`).
  /// Called before the client's first use, so the client it replaces never connected.
  mutating func allowPlainTransfer() {
    secretClient = SecretClient(bus: secretClient.bus, busName: secretClient.busName, allowsPlainTransfer: true)
  }

  /// Text on stdout, exactly as given.
  func print(_ text: String) {
    try? output.writeAll(text)
  }

  /// Raw bytes on stdout; false when stdout is gone (a closed pipe).
  @discardableResult
  func write(_ bytes: UnsafeRawBufferPointer) -> Bool { (try? output.writeAll(bytes)) != nil }

  /// A secret on stdout, byte for byte; a newline follows only when stdout is a terminal.
  func writeSecret(_ bytes: SecretBytes) throws(CLIError) {
    guard bytes.withUnsafeBytes({ write($0) }) else { throw .service("cannot write the secret to stdout") }
    if outputIsTerminal { print("\n") }
  }

  /// One line on stderr, prefixed with the program's name; control characters (from labels
  /// and attributes quoted in it) are shown as escapes.
  func report(_ message: String) {
    try? error.writeAll("secretctl: \(CLIError.oneLine(message).visible)\n")
  }
}

/// Asking for a secret on the terminal with echo off.
enum Terminal {
  /// Reads one line from the controlling terminal with echo off, after showing `prompt` there.
  /// The line's newline is not kept. The terminal's settings are restored afterwards, also when
  /// any signal that can end us (SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1, …, the real-time
  /// ones) does so mid-prompt; one that stops us (Ctrl-Z's SIGTSTP, SIGTTIN and SIGTTOU in the
  /// background) stops us with the terminal as it was, and echo goes off again when we are
  /// continued.
  static func readSecret(prompt: String, into buffer: SecretBytes) throws(CLIError) {
    // What is typed must not reach a core file if a signal (Ctrl-\ is SIGQUIT) dumps us mid-prompt.
    try? ResourceLimits.disableCoreFiles()
    guard let tty = try? FileDescriptor.openControllingTerminal() else {
      throw .usage("no terminal to ask on; pipe the secret on stdin instead (`printf %s \"$TOKEN\" | secretctl set …`)")
    }
    defer { tty.close() }
    if let original = try? tty.terminalAttributes() {
      // Echo goes off before the prompt shows, so nothing typed after seeing it is echoed.
      try tty.withTerminalAttributes(original.withoutEcho, restoring: original, on: signalsThatEndOrStopUs) {
        () throws(CLIError) in
        try? tty.writeAll(prompt)
        try readLine(from: tty, into: buffer)
      }
    } else {
      try? tty.writeAll(prompt)
      try readLine(from: tty, into: buffer)
    }
    // Echo was off, so the user's Enter did not move the cursor.
    try? tty.writeAll("\n")
  }

  private static func readLine(from tty: FileDescriptor, into buffer: SecretBytes) throws(CLIError) {
    var byte: UInt8 = 0
    while true {
      let got: Int
      do throws(Errno) {
        got = try withUnsafeMutableBytes(of: &byte) { raw in Result { () throws(Errno) in try tty.read(into: raw) } }
          .get()
      } catch {
        throw .service("cannot read from the terminal: \(error)")
      }
      if got == 0 {
        if buffer.count == 0 { throw .usage("no secret entered (end of input); nothing was stored") }
        return
      }
      if byte == UInt8(ascii: "\n") { break }
      buffer.append(byte)
    }
    if buffer.last == UInt8(ascii: "\r") { buffer.removeLast(1) }
    byte = 0
  }

  private static let signalsThatEndOrStopUs = Signal.endingOrStopping
}
