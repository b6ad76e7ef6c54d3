import Glibc

enum Environment {
  /// The value of one environment variable, or `nil` when it is unset. Wraps `getenv`, which
  /// reads the process environment directly; `ProcessInfo` would need Foundation (and ICU).
  static func value(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }
}
