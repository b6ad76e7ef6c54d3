// Lifecycle logging to stderr. Never pass a secret or a key here.
import Glibc

/// One line per lifecycle event on stderr, prefixed with the program name.
public enum Log {
  /// Writes `secretd: <message>` as one write(2) on fd 2, so lines never interleave.
  public static func info(_ message: String) { emit("secretd: \(message)\n") }

  public static func warning(_ message: String) { emit("secretd: warning: \(message)\n") }

  public static func error(_ message: String) { emit("secretd: error: \(message)\n") }

  /// Writes `message` as given (usage errors that carry their own prefix).
  public static func plain(_ message: String) { emit(message + "\n") }

  private static func emit(_ line: String) {
    var line = line
    line.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = write(2, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
        if written <= 0 { break }
        offset += written
      }
    }
  }
}
