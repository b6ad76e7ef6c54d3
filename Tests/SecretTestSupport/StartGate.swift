import Foundation

/// Lets at most `width` starts run at once; the others wait without holding a thread.
///
/// A provider's start blocks (it waits for the provider to take its name), so it runs on a thread
/// of its own; the gate bounds how many start together, since each holds inotify instances, of
/// which a user may have only 128. Waiting here, and not on one of Swift's few pool threads,
/// leaves the pool to other tests' deadlines and timers.
actor StartGate {
  private let width: Int
  private var running = 0
  private var waiting: [CheckedContinuation<Void, Never>] = []

  init(width: Int) { self.width = width }

  func start<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    await enter()
    defer { leave() }
    return try await onOwnThread(body)
  }

  private func enter() async {
    guard running == width else {
      running += 1
      return
    }
    await withCheckedContinuation { waiting.append($0) }
  }

  /// Hands the place straight to the longest waiter, if any.
  private func leave() {
    if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
  }
}

let providerStarts = StartGate(width: ProcessInfo.processInfo.activeProcessorCount)
