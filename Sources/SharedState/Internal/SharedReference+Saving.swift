import Synchronization

/// Who may call the key's `save`. Only one caller at a time, so the key receives values in
/// version order; the key runs with no lock held, so it may be slow or reach code that mutates
/// the value again. A mutation made while another caller holds the turn is left to that caller,
/// which saves it before giving the turn up.
struct SaveTurn {
  var taken = false
  /// A mutation happened since the holder last read the value.
  var mutated = false
  /// `save()` calls waiting for the turn, first come first served.
  var waiting: [CheckedContinuation<Void, Never>] = []
  /// The version last handed to the key.
  var savedVersion: UInt64 = 0
}

extension SharedReference {
  /// Saves the mutated value (`.didSet`), or leaves it to the caller holding the turn.
  @usableFromInline
  func saveAfterMutation() {
    let takesTurn = saveTurn.withLock { turn in
      turn.mutated = true
      guard !turn.taken else { return false }
      turn.taken = true
      return true
    }
    if takesTurn { giveUpTurn() }
  }

  /// Saves the value now (`.userInitiated`), after any save in progress; the last save error
  /// is cleared while it runs, as in swift-sharing.
  func save() async throws {
    guard let saver else { return }
    if cell.state.withLock({ $0.saveError != nil }) { cell.change(.saveError) { $0.saveError = nil } }
    await takeTurn()
    let (value, version) = cell.state.withLock { ($0.value, $0.version) }
    saveTurn.withLock { $0.savedVersion = max($0.savedVersion, version) }
    let (description, reportIssue) = (continuationDescription, reportIssue)
    try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
      saver(
        value, .userInitiated,
        SaveContinuation(description, reportIssue: reportIssue) { [weak self] result in
          self?.endSave(with: result)
          waiter.resume(with: result)
        })
      giveUpTurn()
    }
  }

  /// Waits until no other caller holds the save turn, and takes it.
  private func takeTurn() async {
    await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
      let isFree = saveTurn.withLock { turn in
        guard turn.taken else {
          turn.taken = true
          return true
        }
        turn.waiting.append(waiter)
        return false
      }
      if isFree { waiter.resume() }
    }
  }

  /// What the turn holder does next.
  private enum NextSave {
    /// Hand the turn to a waiting `save()`: it saves the latest value.
    case handOver(CheckedContinuation<Void, Never>)
    /// Save a mutation made while the turn was held.
    case mutation
    case done
  }

  /// Run by the turn holder once the key has its value: hands the turn to the next `save()`,
  /// or saves the mutations made meanwhile, then frees the turn.
  private func giveUpTurn() {
    while true {
      let next = saveTurn.withLock { turn -> NextSave in
        if !turn.waiting.isEmpty { return .handOver(turn.waiting.removeFirst()) }
        if turn.mutated {
          turn.mutated = false
          return .mutation
        }
        turn.taken = false
        return .done
      }
      switch next {
      case .handOver(let waiter):
        waiter.resume()
        return
      case .mutation:
        saveLatestMutation()
      case .done:
        return
      }
    }
  }

  private func saveLatestMutation() {
    guard let saver else { return }
    let (value, version) = cell.state.withLock { ($0.value, $0.version) }
    let isNewer = saveTurn.withLock { turn in
      // A `save()` already handed a value at least this recent to the key.
      guard version > turn.savedVersion else { return false }
      turn.savedVersion = version
      return true
    }
    guard isNewer else { return }
    saver(
      value, .didSet,
      SaveContinuation(continuationDescription, reportIssue: reportIssue) { [weak self] result in
        self?.endSave(with: result)
      })
  }
}
