// The time items expire by, injectable so tests need not wait.
import Synchronization
import SystemCalls

/// What the store reads the time from when it expires items: whole Unix seconds. (Not the
/// standard library's `Clock`, which measures instants and durations, not calendar time.)
protocol ExpiryClock: Sendable {
  func now() -> UInt64
}

/// The system's wall clock.
struct SystemExpiryClock: ExpiryClock {
  func now() -> UInt64 { UInt64(max(0, WallClock.seconds)) }
}

/// A clock that only moves when told to; for tests.
final class ManualExpiryClock: ExpiryClock {
  private let current: Mutex<UInt64>
  init(_ start: UInt64) { current = Mutex(start) }
  func now() -> UInt64 { current.withLock { $0 } }
  func advance(by seconds: UInt64) { current.withLock { $0 += seconds } }
}
