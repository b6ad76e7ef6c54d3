// Lifecycle logging to stderr. Never pass a secret or a key here.
import SystemCalls

/// One line per lifecycle event on stderr, prefixed with the program name.
package enum Log {
  /// Writes `secretd: <message>` as one write(2) on fd 2, so lines never interleave.
  /// Messages quote names that clients chose, so control characters are escaped: no client
  /// can end a line and write one of its own.
  package static func info(_ message: String) { emit("secretd: \(escaped(message))\n") }

  package static func warning(_ message: String) { emit("secretd: warning: \(escaped(message))\n") }

  package static func error(_ message: String) { emit("secretd: error: \(escaped(message))\n") }

  /// Writes `message` as given (usage errors that carry their own prefix).
  package static func plain(_ message: String) { emit(message + "\n") }

  /// `message` with every control character (C0, DEL, C1, the Unicode line separators) written
  /// as `\u{XX}`.
  static func escaped(_ message: String) -> String {
    guard message.unicodeScalars.contains(where: isControl) else { return message }
    var result = ""
    for scalar in message.unicodeScalars {
      if isControl(scalar) {
        result += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
  }

  private static func emit(_ line: String) {
    // Nothing useful can be done when stderr itself fails.
    try? FileDescriptor.standardError.writeAll(line)
  }
}
