// The time items expire by, injectable so tests need not wait.
import Synchronization
package import SystemCalls

/// A source of the current time in whole Unix seconds.
protocol UnixClock: Sendable {
  func now() -> UInt64
}

/// The system's wall clock.
struct SystemUnixClock: UnixClock {
  func now() -> UInt64 { UInt64(max(0, WallClock.seconds)) }
}

/// A clock that only moves when told to; for tests.
final class ManualUnixClock: UnixClock {
  private let current: Mutex<UInt64>
  init(_ start: UInt64) { current = Mutex(start) }
  func now() -> UInt64 { current.withLock { $0 } }
  func advance(by seconds: UInt64) { current.withLock { $0 += seconds } }
}
