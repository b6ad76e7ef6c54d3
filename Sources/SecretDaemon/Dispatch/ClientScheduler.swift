// Fair service: every client's calls run in the order sent, one at a time per client, on a few
// threads of the daemon's own, taking clients in turn. The thread that reads the bus queues
// calls, and a client's next call runs only once its large answer is written, so a client that
// floods the daemon delays others by at most the call it has running and the answer it is sent.
// Large calls (listings, reads of many items) run a few at a time, fewer than the processors, so
// that a flood of them leaves a processor to every other client's small calls.
// When nothing at all is queued, running or waiting unread on the bus, a call that only reads is
// answered on the reading thread itself (a hand-off to another thread is most of a small call's
// cost); a flood, which always has more unread, never is.
// A client's Unix user is checked before its first call runs; calls of other users are refused.
import SystemCalls

/// What a call weighs for the scheduler.
enum CallWeight {
  /// A small read, which may be answered on the reading thread when all is idle.
  case quick
  case light
  /// A large call (a listing, a read of many items).
  case heavy
}

/// Queues calls per client and runs them on worker threads, in turn.
final class ClientScheduler: @unchecked Sendable {
  // SAFETY: every mutable property is read and written only inside `lock.run`; the closures
  // are set once in init and are themselves safe to call from any thread (see Daemon).
  enum Verdict: Equatable {
    case allowed
    case refused(String)
  }

  /// Bounds on what one client may have waiting.
  struct Bounds {
    var calls = 1024
    var bytes = 64 << 20
  }

  private struct Queued {
    let call: IncomingCall
    let isHeavy: Bool
  }

  private struct Client {
    var verdict: Verdict?
    var queued: [Queued] = []
    var queuedBytes = 0
    /// A worker is checking this client or running one of its calls.
    var running = false
    /// The client left the bus while a call of its ran; forget it when that call ends.
    var departed = false
  }

  private enum Job {
    case vet(String)
    case run(String, Queued)
  }

  private let lock = WaitableLock()
  private var clients: [String: Client] = [:]
  /// Clients with a step under way, on a worker or on the reading thread.
  private var busy = 0
  /// Clients with calls waiting and none running, in the order they became ready.
  private var ready: [String] = []
  /// Large calls running now, and how many may.
  private var heavyRunning = 0
  private let heavySlots: Int
  private let bounds: Bounds
  private let vet: @Sendable (String) -> Verdict
  private let run: @Sendable (IncomingCall) -> Void
  private let weigh: @Sendable (IncomingCall) -> CallWeight
  private let departed: @Sendable (String) -> Void

  /// - Parameters:
  ///   - vet: decides whether a client may be served; blocks for a round trip to the bus.
  ///   - run: answers one call.
  ///   - weigh: `quick` for a call that may be answered on the reading thread when all is idle
  ///     (it must not wait for other calls: reads, not writes that announce their changes),
  ///     weighed with nothing more unread on the bus; `heavy` for a large one, of which at most
  ///     `heavySlots` run at once.
  ///   - departed: called once the last step of a client that left the bus has ended, so that
  ///     what a call still in flight made for it (a session) is let go after that call.
  init(
    bounds: Bounds = Bounds(), vet: @escaping @Sendable (String) -> Verdict,
    run: @escaping @Sendable (IncomingCall) -> Void,
    weigh: @escaping @Sendable (IncomingCall) -> CallWeight, heavySlots: Int,
    departed: @escaping @Sendable (String) -> Void
  ) {
    self.bounds = bounds
    self.vet = vet
    self.run = run
    self.weigh = weigh
    self.heavySlots = max(1, heavySlots)
    self.departed = departed
  }

  /// Starts `count` worker threads.
  func start(threads count: Int) {
    for index in 0..<count {
      NativeThread.detach(name: "secretd-call-\(index)") { [self] in work() }
    }
  }

  /// Queues `call` behind its client's earlier calls. Called on the thread that reads the bus:
  /// never blocks beyond the queue's lock.
  func submit(_ call: IncomingCall) {
    enum Decision {
      case queued
      case refused(DBusError)
      case now
    }
    let weight = weigh(call)
    let quick = weight == .quick
    let queued = Queued(call: call, isHeavy: weight == .heavy)
    let decision = lock.run { () -> Decision in
      var client = clients[call.sender] ?? Client()
      if case .refused(let reason) = client.verdict { return .refused(.accessDenied(reason)) }
      if quick, busy == 0, ready.isEmpty, client.verdict == .allowed {
        client.running = true
        busy += 1
        clients[call.sender] = client
        return .now
      }
      guard client.queued.count < bounds.calls, client.queuedBytes + call.bodySize <= bounds.bytes else {
        return .refused(
          .limitsExceeded(
            "this connection has \(client.queued.count) calls (\(client.queuedBytes) bytes) waiting; "
              + "wait for their answers before sending more"))
      }
      client.queued.append(queued)
      client.queuedBytes += call.bodySize
      if !client.running && client.queued.count == 1 {
        ready.append(call.sender)
        lock.signal()
      }
      clients[call.sender] = client
      return .queued
    }
    switch decision {
    case .queued: break
    case .refused(let error): call.fail(error)
    case .now:
      run(call)
      finished(call.sender)
    }
  }

  /// The clients whose user was checked and served, still on the bus: the only ones told of
  /// changes, so that a refused client never learns an item's label or attributes.
  var servedClients: [String] {
    lock.run { clients.compactMap { $0.value.verdict == .allowed && !$0.value.departed ? $0.key : nil } }
  }

  /// Forgets a client that left the bus, with whatever it still had waiting.
  func forget(_ sender: String) {
    let dropped = lock.run { () -> [IncomingCall] in
      guard var client = clients[sender] else { return [] }
      let dropped = client.queued.map(\.call)
      if client.running {
        client.queued = []
        client.departed = true
        clients[sender] = client
      } else {
        clients[sender] = nil
        ready.removeAll { $0 == sender }
      }
      return dropped
    }
    _ = dropped  // released outside the lock: their answers go to a connection that is gone
  }

  private func work() -> Never {
    while true {
      switch next() {
      case .vet(let sender):
        settle(sender, vet(sender))
      case .run(let sender, let queued):
        run(queued.call)
        // The client's next call waits for this answer to be written, not only queued.
        queued.call.waitUntilLargeReplyIsWritten()
        finished(sender, heavy: queued.isHeavy)
      }
    }
  }

  /// Waits for a ready client whose next step may start and takes that step.
  private func next() -> Job {
    lock.run {
      while true {
        guard let index = ready.firstIndex(where: mayStart) else {
          lock.wait()
          continue
        }
        let sender = ready.remove(at: index)
        guard var client = clients[sender] else { continue }
        guard let first = client.queued.first else { continue }
        client.running = true
        busy += 1
        defer { clients[sender] = client }
        guard client.verdict != nil else { return .vet(sender) }
        client.queued.removeFirst()
        client.queuedBytes -= first.call.bodySize
        if first.isHeavy { heavyRunning += 1 }
        return .run(sender, first)
      }
    }
  }

  /// Whether the next step of `sender` may start: anything but a large call while as many as
  /// may run. A client gone or with nothing queued may be taken (and passed over). Runs inside
  /// `lock.run`.
  private func mayStart(_ sender: String) -> Bool {
    guard let client = clients[sender], client.verdict != nil, let first = client.queued.first else { return true }
    return !first.isHeavy || heavyRunning < heavySlots
  }

  private func settle(_ sender: String, _ verdict: Verdict) {
    let (refused, left) = lock.run { () -> ([Queued], Bool) in
      busy -= 1
      guard var client = clients[sender] else { return ([], false) }
      client.verdict = verdict
      var refused: [Queued] = []
      if verdict != .allowed {
        refused = client.queued
        client.queued = []
        client.queuedBytes = 0
      }
      return (refused, putBack(sender, client))
    }
    if case .refused(let reason) = verdict {
      for queued in refused { queued.call.fail(.accessDenied(reason)) }
    }
    if left { departed(sender) }
  }

  private func finished(_ sender: String, heavy: Bool = false) {
    let left = lock.run { () -> Bool in
      busy -= 1
      if heavy {
        heavyRunning -= 1
        // A worker may be waiting for this slot, with no client newly ready to wake it.
        lock.signal()
      }
      guard let client = clients[sender] else { return false }
      return putBack(sender, client)
    }
    if left { departed(sender) }
  }

  /// Puts a client back after a step: ready again if calls wait, forgotten if it left (then
  /// returns true). Runs inside `lock.run`.
  private func putBack(_ sender: String, _ client: Client) -> Bool {
    var client = client
    client.running = false
    if client.departed {
      clients[sender] = nil
      return true
    }
    clients[sender] = client
    if !client.queued.isEmpty {
      ready.append(sender)
      lock.signal()
    }
    return false
  }
}
