// The system log (syslog): where a program run by PAM, whose output goes nowhere, says what it did.
import Glibc

/// Lines to the system log, under the authpriv facility (where PAM's own lines go).
package enum SystemLog {
  /// Writes `message` as a notice (a warning with `isWarning`), tagged with the program's name
  /// and pid. Wraps openlog(3) and vsyslog(3).
  package static func write(_ message: String, isWarning: Bool = false) {
    openlog(nil, LOG_PID, LOG_AUTHPRIV)
    message.withCString { text in
      withVaList([text]) { vsyslog(isWarning ? LOG_WARNING : LOG_NOTICE, "%s", $0) }
    }
  }
}
