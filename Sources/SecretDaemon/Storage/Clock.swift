// Time for expiry, injectable so tests need not wait.
import Synchronization

/// A source of the current time in unix seconds.
public protocol Clock: Sendable {
  func now() -> UInt64
}

/// The real wall clock.
public struct SystemClock: Clock {
  public init() {}
  public func now() -> UInt64 { UnixTime.now() }
}

/// A clock that only moves when told to; for tests.
public final class ManualClock: Clock {
  private let current: Mutex<UInt64>
  public init(_ start: UInt64) { current = Mutex(start) }
  public func now() -> UInt64 { current.withLock { $0 } }
  public func advance(by seconds: UInt64) { current.withLock { $0 += seconds } }
}
