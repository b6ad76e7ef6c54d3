import Dispatch
import Synchronization

/// The clock that closes the write windows of persistent keys (``PersistentValue``): it runs an
/// action after a delay.
///
/// ``live`` sleeps on `ContinuousClock` and then runs the action on a background dispatch
/// queue (writes block, so they stay off the cooperative pool). Tests put a ``TestWriteClock``
/// in ``SharedEnvironment/writeClock`` and advance it by hand, so they never sleep; a key
/// author's key takes the clock of the environment it is made in.
///
/// ```swift
/// let files = InMemoryFileSystem()
/// let clock = TestWriteClock()
/// SharedEnvironment.test(fileSystem: files, clock: clock).withValue {
///   @Shared(.fileStorage(URL(filePath: "/n.json"))) var n = 0
///   $n.withLock { $0 = 1 }            // written at once
///   $n.withLock { $0 = 2 }            // waits for the window
///   clock.advance(by: .seconds(1))   // written now
/// }
/// ```
public struct WriteClock: Sendable {
  /// Runs `action` once after `delay`, unless the returned subscription is cancelled first.
  public var schedule: @Sendable (_ delay: Duration, _ action: @escaping @Sendable () -> Void) -> SharedSubscription

  /// Creates a clock from its scheduling function.
  public init(
    schedule:
      @escaping @Sendable (
        _ delay: Duration, _ action: @escaping @Sendable () -> Void
      ) -> SharedSubscription
  ) {
    self.schedule = schedule
  }

  /// The real clock: `ContinuousClock`, actions on a utility dispatch queue.
  public static let live = WriteClock { delay, action in
    let task = Task.detached {
      do { try await ContinuousClock().sleep(for: delay) } catch { return }
      DispatchQueue.global(qos: .utility).async(execute: action)
    }
    return SharedSubscription { task.cancel() }
  }
}

/// A manual ``WriteClock`` for tests: time moves only when ``advance(by:)`` is called.
public final class TestWriteClock: Sendable {
  private struct Item {
    var id: Int
    var deadline: Duration
    var action: @Sendable () -> Void
  }

  private struct State {
    var now: Duration = .zero
    var nextID = 0
    var items: [Item] = []
  }

  private let state = Mutex(State())

  /// Creates a clock at time zero with nothing scheduled.
  public init() {}

  /// The clock to hand to a ``SharedEnvironment`` (or a ``PersistentValue``'s environment).
  public var clock: WriteClock {
    WriteClock { [self] delay, action in
      let id = state.withLock { state in
        state.nextID += 1
        state.items.append(Item(id: state.nextID, deadline: state.now + delay, action: action))
        return state.nextID
      }
      return SharedSubscription { [weak self] in
        self?.state.withLock { $0.items.removeAll { $0.id == id } }
      }
    }
  }

  /// Time elapsed since creation.
  public var now: Duration { state.withLock { $0.now } }

  /// How many actions wait for their deadline.
  public var scheduledCount: Int { state.withLock { $0.items.count } }

  /// Moves time forward and runs every action whose deadline is reached, in deadline order,
  /// on the calling thread, before returning.
  public func advance(by duration: Duration = .zero) {
    let target = state.withLock { $0.now + duration }
    while true {
      let next: Item? = state.withLock { state in
        guard
          let index = state.items.indices
            .filter({ state.items[$0].deadline <= target })
            .min(by: { state.items[$0].deadline < state.items[$1].deadline })
        else {
          state.now = target
          return nil
        }
        let item = state.items.remove(at: index)
        state.now = max(state.now, item.deadline)
        return item
      }
      guard let next else { return }
      next.action()
    }
  }
}
