// Prompts for the persistent collection, which only its user can unlock: `Unlock` answers with
// one, and it completes when `login` is unlocked by other means (`secretctl unlock` from a
// terminal, a TPM at start) or when its client dismisses it. secretd shows nothing itself: a
// headless machine has no screen to ask on, so a waiting client is told in the log what to run.
import Synchronization

/// The prompts clients wait on, by number, each answered to its own client only.
final class UnlockPrompts: Sendable {
  /// A client's prompts at once: a client waits on one, so a few are plenty, and a flood of
  /// `Unlock` calls holds no more.
  static let perClient = 8

  struct Waiting: Equatable {
    let owner: String
    /// The objects the `Unlock` call asked for that needed the user.
    let objects: [String]
    /// Whether the client called `Prompt`: only then may it be completed.
    var prompted = false
  }

  private let state = Mutex<(next: Int, waiting: [Int: Waiting])>((1, [:]))

  /// A new prompt for `objects`; nil when `owner` holds as many as it may.
  func open(objects: [String], owner: String) -> Int? {
    state.withLock { state in
      guard state.waiting.values.count(where: { $0.owner == owner }) < Self.perClient else { return nil }
      defer { state.next += 1 }
      state.waiting[state.next] = Waiting(owner: owner, objects: objects)
      return state.next
    }
  }

  /// Marks prompt `number` as shown to `caller`; false when it is not one of `caller`'s.
  func prompt(_ number: Int, caller: String) -> Bool {
    state.withLock { state in
      guard state.waiting[number]?.owner == caller else { return false }
      state.waiting[number]?.prompted = true
      return true
    }
  }

  /// Removes prompt `number` of `caller`; nil when it is not one of `caller`'s.
  func dismiss(_ number: Int, caller: String) -> Waiting? {
    state.withLock { state in
      guard state.waiting[number]?.owner == caller else { return nil }
      return state.waiting.removeValue(forKey: number)
    }
  }

  /// Removes and returns every prompt a client has called `Prompt` on: the collection is
  /// unlocked, they are done. Each is returned once, whoever asks first.
  func takePrompted() -> [(number: Int, waiting: Waiting)] {
    state.withLock { state in
      let done = state.waiting.filter(\.value.prompted).map { (number: $0.key, waiting: $0.value) }
      for prompt in done { state.waiting[prompt.number] = nil }
      return done.sorted { $0.number < $1.number }
    }
  }

  /// Forgets the prompts of a client that left the bus.
  func closeAll(ownedBy owner: String) {
    state.withLock { state in state.waiting = state.waiting.filter { $0.value.owner != owner } }
  }
}
