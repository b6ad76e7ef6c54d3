// Wall-clock time: seconds since 1970 and their UTC calendar form.
import Glibc

/// Seconds since 1970-01-01 UTC, as the system clock says.
package enum WallClock {
  /// Whole seconds now. Wraps time(2).
  package static var seconds: Int64 { Int64(time(nil)) }

  /// Seconds with sub-second precision. Wraps clock_gettime(2) with CLOCK_REALTIME.
  package static var preciseSeconds: Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }
}

/// A moment broken down into UTC calendar fields.
package struct UTCTime: Equatable, Sendable {
  package var year: Int
  package var month: Int
  package var day: Int
  package var hour: Int
  package var minute: Int
  package var second: Int

  /// The fields of `seconds` since 1970; nil when out of the system's range. Wraps gmtime_r(3).
  package init?(secondsSince1970 seconds: Int64) {
    var parts = tm()
    var value = time_t(seconds)
    guard gmtime_r(&value, &parts) != nil else { return nil }
    year = Int(parts.tm_year) + 1900
    month = Int(parts.tm_mon) + 1
    day = Int(parts.tm_mday)
    hour = Int(parts.tm_hour)
    minute = Int(parts.tm_min)
    second = Int(parts.tm_sec)
  }

  /// `2026-11-30T07:48:20Z`.
  package var iso8601: String {
    "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
  }

  /// `20261130T074820`, for file names.
  package var compact: String {
    "\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))T\(pad(hour, 2))\(pad(minute, 2))\(pad(second, 2))"
  }

  private func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
  }
}
