// The wall clock. Wraps time(2).
import Glibc

enum UnixTime {
  static func now() -> UInt64 { UInt64(max(0, time(nil))) }
}
