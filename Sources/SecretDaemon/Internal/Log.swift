// Lifecycle logging to stderr. Never pass a secret or a key here.
import SystemCalls

/// One line per lifecycle event on stderr, prefixed with the program name.
package enum Log {
  /// Writes `secretd: <message>` as one write(2) on fd 2, so lines never interleave.
  package static func info(_ message: String) { emit("secretd: \(message)\n") }

  package static func warning(_ message: String) { emit("secretd: warning: \(message)\n") }

  package static func error(_ message: String) { emit("secretd: error: \(message)\n") }

  /// Writes `message` as given (usage errors that carry their own prefix).
  package static func plain(_ message: String) { emit(message + "\n") }

  private static func emit(_ line: String) {
    // Nothing useful can be done when stderr itself fails.
    try? FileDescriptor.standardError.writeAll(line)
  }
}
