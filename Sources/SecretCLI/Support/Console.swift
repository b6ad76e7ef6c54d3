// Where a command reads and writes: the standard descriptors and the client.
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
