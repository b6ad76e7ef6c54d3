// The terminal: a secret asked for with echo off, the settings restored whatever signal comes.
import SecretClient
import SystemCalls

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
