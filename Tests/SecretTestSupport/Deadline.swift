/// Thrown when an awaited event did not happen in time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
  public var description: String
}

/// Runs `body`, failing with `DeadlineExceeded` if it has not finished within `seconds`.
/// The deadline only bounds a wait for an event; it never stands in for one.
public func withDeadline<T: Sendable>(
  seconds: Double, _ what: String = "operation", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
  try await withThrowingTaskGroup(of: T.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(for: .seconds(seconds))
      throw DeadlineExceeded(description: "\(what) did not finish within \(seconds) s")
    }
    defer { group.cancelAll() }
    guard let first = try await group.next() else { throw DeadlineExceeded(description: what) }
    return first
  }
}
