// secretd killed at any moment loses no acknowledged write: its store lives in an arena that
// outlives the process. Here the test holds the arena, as systemd's file descriptor store does,
// and hands it to each new secretd the way systemd does (LISTEN_FDS, LISTEN_FDNAMES=store);
// scripts/check-unit-in-container does the same under a real user manager.
import Foundation
import SecretTestSupport
import Synchronization
import Testing

@testable import SecretDaemon

/// A secretd on a test's bus that is handed `arena` at each start, as by systemd's fd store.
final class KeptSecretd: Sendable {
  let instance: ProviderInstance
  let busName: String
  let arena: Int32
  let arguments: [String]
  /// More descriptors the service manager hands back beside the arena, by name.
  let alsoHanded: [(name: String, descriptor: Int32)]
  /// What runs secretd (`prlimit …`), before its path.
  let launcher: [String]
  let log: URL
  private let process = Mutex<ChildProcess?>(nil)

  init(
    on instance: ProviderInstance, busName: String, arena: Int32, arguments: [String] = [],
    alsoHanded: [(name: String, descriptor: Int32)] = [], launcher: [String] = []
  ) {
    (self.instance, self.busName, self.arena, self.arguments) = (instance, busName, arena, arguments)
    (self.alsoHanded, self.launcher) = (alsoHanded, launcher)
    log = instance.bus.directory.appending(path: "\(busName).log")
  }

  var pid: Int32 { process.withLock { $0?.pid ?? 0 } }
  var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

  /// Where secretd sends what it tells the service manager, when set before `start()`.
  let notifySocket = Mutex<String?>(nil)

  /// Starts secretd with the arena as its descriptor 3 and waits until it owns its name.
  func start() throws {
    let file = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { [file, null].forEach { close($0) } }
    var environment = instance.environment
    (environment["LISTEN_FDS"], environment["LISTEN_FDNAMES"]) = (
      "\(1 + alsoHanded.count)", ([StoreKeeper.storeName] + alsoHanded.map(\.name)).joined(separator: ":")
    )
    environment["NOTIFY_SOCKET"] = notifySocket.withLock { $0 }
    // LISTEN_PID names the process that execs secretd, as systemd sets it after fork.
    let child = try ChildProcess(
      try resolveExecutable("sh"),
      [
        "-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"",
      ] + launcher + [secretdPath(), "--address", instance.busAddress, "--bus-name", busName] + arguments,
      environment: environment, stdin: null, stdout: null, stderr: file,
      inheriting: [arena] + alsoHanded.map(\.descriptor))
    process.withLock { $0 = child }
    let wait = try runProcess(
      "gdbus", ["wait", "--address", instance.busAddress, "--timeout", "20", busName], input: nil,
      environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
    guard wait.status == 0, child.isRunning else { throw HarnessError("secretd did not start: \(logText)") }
  }

  /// SIGKILL, as an OOM kill or a crash ends it.
  func kill() {
    guard let child = process.withLock({ $0.take() }) else { return }
    child.signal(SIGKILL)
    child.wait()
  }

  func stop() {
    guard let child = process.withLock({ $0.take() }) else { return }
    child.signal(SIGTERM)
    child.wait()
  }
}

@Suite("surviving its own death")
struct SurvivalTests {
  /// An arena made as secretd makes one, held by the test.
  static func keptArena(maxMemory: Int = 2 << 20) throws -> Store {
    try makeStore(limits: Limits(maxMemory: maxMemory))
  }

  static let kills = 150

  @Test(
    "killed 150 times with SIGKILL at random points while 4 unbounded writers create, replace and delete: after each kill the arena holds every change acknowledged before it, byte for byte, nothing torn, and secretd serves them again"
  )
  func killedWhileWriting() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try Self.keptArena()
      let secretd = KeptSecretd(
        on: instance, busName: "org.example.kept", arena: arena.arena.memory.file.rawValue,
        arguments: ["--max-memory", "2M"])
      try secretd.start()
      defer { secretd.stop() }
      let log = WriteLog()
      // Writers block in GDBus calls: on threads of their own, never the cooperative pool's.
      let writers = (0..<4).map { writer in
        Task { try await onOwnThread { try log.write(as: writer, to: secretd) } }
      }
      // Unbounded writers keep four changes in flight, so each kill, after a random number of
      // acknowledgements, lands at a random point of some write.
      log.allow(1_000_000)
      // After each kill the arena, as the next secretd finds it, holds every change acknowledged
      // before the kill (or a later one): checked at each kill, as a later write could hide a loss.
      for kill in 0..<Self.kills {
        let enough = log.acknowledgedCount + Int.random(in: 1...6)
        try await eventually("more writes acknowledged before kill \(kill)", seconds: 30) {
          log.acknowledgedCount >= enough
        }
        // A random instant within the next few writes, not one just after an acknowledgement.
        try await Task.sleep(for: .microseconds(Int.random(in: 0..<5_000)))
        let before = log.histories
        secretd.kill()
        let held = try Self.held(try ArenaOpeningTests.copy(arena.arena))
        for (attributes, possible) in log.possibleStates(since: before) {
          #expect(possible.contains(held[attributes]), "kill \(kill): \(attributes)")
        }
        try secretd.start()
      }
      log.stop()
      for writer in writers { try await writer.value }
      let client = try RawClient(address: instance.busAddress, destination: secretd.busName)
      let session = try client.openPlainSession()
      #expect(log.acknowledgedCount >= Self.kills)
      for (attributes, allowed) in log.possibleStates(since: log.histories) {
        let found = try client.search(attributes)
        #expect(found.count <= 1, "\(attributes)")
        let stored = try found.first.map { try client.plainSecret($0, session: session) }
        #expect(
          allowed.contains(stored),
          "\(attributes): \(stored?.count ?? -1) bytes; allowed \(allowed.map { $0?.count ?? -1 })")
      }
      #expect(secretd.logText.contains("serving again the store the service manager kept"), "\(secretd.logText)")
    }
  }

  @Test(
    "the arena caught at 200 random instants while secretd writes, as a kill there would leave it, always opens and holds every change acknowledged before"
  )
  func caughtAtAnyInstant() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try Self.keptArena()
      let secretd = KeptSecretd(
        on: instance, busName: "org.example.caught", arena: arena.arena.memory.file.rawValue,
        arguments: ["--max-memory", "2M"])
      try secretd.start()
      defer { secretd.stop() }
      let log = WriteLog()
      let writers = (0..<4).map { writer in
        Task { try await onOwnThread { try log.write(as: writer, to: secretd) } }
      }
      log.allow(1_000_000)
      // At least 200 instants, spread over at least 200 acknowledged changes (the deadline only
      // bounds a machine too loaded to get there).
      var instant = 0
      let deadline = ContinuousClock.now + .seconds(300)
      while instant < 200 || log.acknowledgedCount < 200 {
        try #require(ContinuousClock.now < deadline, "\(instant) instants, \(log.acknowledgedCount) changes")
        let before = log.histories
        let held = try Self.held(try Self.copy(arena.arena, whileStopped: secretd.pid))
        for (attributes, possible) in log.possibleStates(since: before) {
          #expect(possible.contains(held[attributes]), "instant \(instant): \(attributes)")
        }
        instant += 1
      }
      log.stop()
      for writer in writers { try await writer.value }
    }
  }

  /// Each item's secret by its attributes, as a secretd opening `memory` would serve them; one
  /// item per attributes.
  static func held(_ memory: ArenaMemory) throws -> [[String: String]: [UInt8]] {
    let held = try ArenaOpeningTests.held(memory)
    let (_, contents) = try Arena.open(memory, isValidName: Store.isValidName)
    #expect(held.count == contents.items.count, "one item per attributes")
    return held
  }

  /// A copy of `arena`'s memory made while process `pid` is stopped (SIGSTOP), as it would be
  /// left if the process died at that instruction.
  static func copy(_ arena: Arena, whileStopped pid: Int32) throws -> ArenaMemory {
    let copy = try ArenaMemory.make(size: arena.size, preferSecret: false, allowUnlocked: true)
    kill(pid, SIGSTOP)
    defer { kill(pid, SIGCONT) }
    // Stopped once /proc says so: every store it made is in memory then.
    while !((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") T ") ?? true) {}
    copy.base.copyMemory(from: arena.memory.base, byteCount: arena.size)
    return copy
  }

  @Test(
    "an arena damaged on purpose is never served and never dropped: secretd starts empty, says why, hands it back as 'rejected', lists it, and lets it go when asked"
  )
  func damagedArenaIsRefusedAndKept() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try Self.keptArena()
      let kept = try arena.createItem(
        in: "session", label: "kept", attributes: ["kept": "yes"], contentType: "text/plain", secret: sent("kept"),
        replace: false)
      let item = try arena.item(ItemReference(collection: "session", item: kept.item))
      // One byte of the item's label, inside its checksum.
      let damaged = item.block + ArenaLayout.blockHeaderSize + 64
      arena.arena.memory.base.storeBytes(of: 0x58, toByteOffset: damaged, as: UInt8.self)
      let before = Array(UnsafeRawBufferPointer(start: arena.arena.memory.base, count: arena.arena.size))
      let manager = try NotifySocket(in: instance.bus.directory)
      let secretd = KeptSecretd(on: instance, busName: "org.example.damaged", arena: arena.arena.memory.file.rawValue)
      secretd.notifySocket.withLock { $0 = manager.path }
      try secretd.start()
      defer { secretd.stop() }
      #expect(
        secretd.logText.contains("is not served: at byte \(item.block): its checksum does not match"),
        "\(secretd.logText)")
      #expect(secretd.logText.contains("kept as 'rejected'"), "\(secretd.logText)")
      let handed = [
        "FDSTORE=1\nFDNAME=opening", "FDSTOREREMOVE=1\nFDNAME=opening", "FDSTOREREMOVE=1\nFDNAME=store",
        "FDSTORE=1\nFDNAME=rejected", "FDSTORE=1\nFDNAME=store",
      ]
      try await eventually("secretd to tell the service manager") { manager.received.count >= handed.count }
      #expect(manager.received == handed)
      #expect(Array(UnsafeRawBufferPointer(start: arena.arena.memory.base, count: arena.arena.size)) == before)
      let client = try RawClient(address: instance.busAddress, destination: secretd.busName)
      #expect(try client.search(["kept": "yes"]).isEmpty)
      let session = try client.openPlainSession()
      try client.createPlainItem(session: session, attributes: ["new": "yes"], secret: [1])
      func rejected() throws -> [String] {
        let reply = try client.call(
          ObjectPaths.root, Interfaces.properties, "Get",
          .tuple([.string(Interfaces.secretd), .string("RejectedStores")]))
        return reply.child(0)?.unboxed?.elements.compactMap(\.string) ?? []
      }
      #expect(try rejected().count == 1)
      try client.call(ObjectPaths.root, Interfaces.secretd, "DiscardRejectedStores", .tuple([]))
      #expect(try rejected().isEmpty)
      try await eventually("secretd to tell the service manager to let it go") { manager.received.count > handed.count }
      #expect(manager.received.last == "FDSTOREREMOVE=1\nFDNAME=rejected")
    }
  }

  @Test(
    "a store handed to a service manager that does not say it keeps it is not reported kept, and the log says why"
  )
  func aStoreIsReportedKeptOnlyWhenTheServiceManagerSaysSo() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try Self.keptArena()
      let manager = try NotifySocket(in: instance.bus.directory)
      let secretd = KeptSecretd(
        on: instance, busName: "org.example.unconfirmed", arena: arena.arena.memory.file.rawValue)
      secretd.notifySocket.withLock { $0 = manager.path }
      try secretd.start()
      defer { secretd.stop() }
      try await eventually("secretd to hand its store over") { manager.received.contains("FDSTORE=1\nFDNAME=store") }
      let client = try RawClient(address: instance.busAddress, destination: secretd.busName)
      let kept = try client.call(
        ObjectPaths.root, Interfaces.properties, "Get", .tuple([.string(Interfaces.secretd), .string("StoreKept")]))
      #expect(kept.child(0)?.unboxed?.boolean == false)
      #expect(secretd.logText.contains("no service manager on this bus says whether"), "\(secretd.logText)")
    }
  }

  @Test(
    "a store an earlier secretd died opening is set aside as 'rejected' without being opened again, and the marker goes"
  )
  func aStoreAStartDiedOpeningIsNotOpenedAgain() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try Self.keptArena()
      _ = try arena.createItem(
        in: "session", label: "kept", attributes: ["kept": "yes"], contentType: "text/plain", secret: sent("kept"),
        replace: false)
      let marker = open("/dev/null", O_RDONLY | O_CLOEXEC)
      defer { close(marker) }
      let manager = try NotifySocket(in: instance.bus.directory)
      let secretd = KeptSecretd(
        on: instance, busName: "org.example.died", arena: arena.arena.memory.file.rawValue,
        alsoHanded: [(StoreKeeper.openingName, marker)])
      secretd.notifySocket.withLock { $0 = manager.path }
      try secretd.start()
      defer { secretd.stop() }
      #expect(secretd.logText.contains("an earlier secretd died while opening it"), "\(secretd.logText)")
      try await eventually("secretd to tell the service manager") { manager.received.count >= 4 }
      #expect(
        manager.received == [
          "FDSTOREREMOVE=1\nFDNAME=opening", "FDSTOREREMOVE=1\nFDNAME=store", "FDSTORE=1\nFDNAME=rejected",
          "FDSTORE=1\nFDNAME=store",
        ])
      let client = try RawClient(address: instance.busAddress, destination: secretd.busName)
      #expect(try client.search(["kept": "yes"]).isEmpty)
    }
  }

  @Test(
    "a store that cannot be mapped at one start (locked memory too low) stays kept as it is, and the next start serves it"
  )
  func aStoreThatCannotBeMappedNowIsServedNextTime() async throws {
    try await withProvider(.secretd) { instance in
      let arena = try Self.keptArena(maxMemory: 8 << 20)
      _ = try arena.createItem(
        in: "session", label: "kept", attributes: ["kept": "yes"], contentType: "text/plain", secret: sent("kept"),
        replace: false)
      let manager = try NotifySocket(in: instance.bus.directory)
      // Root locks memory past any limit (CAP_IPC_LOCK): that capability goes first.
      let uncapped = getuid() == 0 ? ["setpriv", "--bounding-set=-ipc_lock"] : []
      let starved = KeptSecretd(
        on: instance, busName: "org.example.starved", arena: arena.arena.memory.file.rawValue,
        arguments: ["--max-memory", "256K"], launcher: uncapped + ["prlimit", "--memlock=\(4 << 20):\(4 << 20)"])
      starved.notifySocket.withLock { $0 = manager.path }
      try starved.start()
      #expect(starved.logText.contains("stays kept for the next start"), "\(starved.logText)")
      let client = try RawClient(address: instance.busAddress, destination: starved.busName)
      #expect(try client.search(["kept": "yes"]).isEmpty)
      starved.stop()
      #expect(manager.received.allSatisfy { $0.hasSuffix("FDNAME=opening") }, "\(manager.received)")
      let again = KeptSecretd(on: instance, busName: "org.example.again", arena: arena.arena.memory.file.rawValue)
      try again.start()
      defer { again.stop() }
      let served = try RawClient(address: instance.busAddress, destination: again.busName)
      #expect(try served.search(["kept": "yes"]).count == 1)
    }
  }

  @Test(
    "an item whose time passed while secretd was dead is gone once it is back, and one whose time is to come stays with it"
  )
  func expiryRunsOnAcrossADeath() async throws {
    try await withProvider(.secretd) { instance in
      let clock = ManualExpiryClock(UInt64(Date().timeIntervalSince1970))
      let arena = try makeStore(limits: Limits(maxMemory: 1 << 20), clock: clock)
      let now = clock.now()
      for (name, expires) in [("past", now - 5), ("future", now + 86_400)] {
        _ = try arena.createItem(
          in: "session", label: name, attributes: ["when": name, "xdg:expires": "\(expires)"],
          contentType: "text/plain", secret: sent(name), replace: false)
      }
      let secretd = KeptSecretd(on: instance, busName: "org.example.expiry", arena: arena.arena.memory.file.rawValue)
      try secretd.start()
      defer { secretd.stop() }
      let client = try RawClient(address: instance.busAddress, destination: secretd.busName)
      try await eventually("the expired item to go") { try client.search(["when": "past"]).isEmpty }
      let future = try #require(try client.search(["when": "future"]).first)
      let attributes = try client.call(
        future, Interfaces.properties, "Get", .tuple([.string(Interfaces.item), .string("Attributes")]))
      #expect(attributes.child(0)?.unboxed?.stringDictionary?["xdg:expires"] == "\(now + 86_400)")
    }
  }
}

/// What the writers changed, by item attributes: every state sent for each item, in order, and
/// which of them secretd last acknowledged. Writers make as many changes as allowed.
final class WriteLog: Sendable {
  /// The states sent for one item (a secret, or nil for a deletion), and the last acknowledged.
  struct History: Sendable {
    var sent: [[UInt8]?] = []
    var acknowledged: Int?
  }

  private struct State {
    var items: [[String: String]: History] = [:]
    var acknowledgedCount = 0
    var allowed = 0
    var done = false
  }

  private let state = Mutex(State())
  private let changed = NSCondition()

  var acknowledgedCount: Int { state.withLock { $0.acknowledgedCount } }
  var histories: [[String: String]: History] { state.withLock { $0.items } }

  /// What secretd may hold for each item (nil: no item), given what it had acknowledged at some
  /// instant (`before`) and everything sent up to now: the state last acknowledged then, or any
  /// sent after it, whose answer may not have come yet.
  func possibleStates(since before: [[String: String]: History]) -> [[String: String]: [[UInt8]?]] {
    var possible: [[String: String]: [[UInt8]?]] = [:]
    for (attributes, history) in histories {
      if let acknowledged = before[attributes]?.acknowledged {
        possible[attributes] = Array(history.sent[acknowledged...])
      } else {
        possible[attributes] = [nil] + history.sent
      }
    }
    return possible
  }

  func allow(_ count: Int) {
    state.withLock { $0.allowed += count }
    changed.broadcast()
  }

  func stop() {
    state.withLock { $0.done = true }
    changed.broadcast()
  }

  /// Waits until one more change is allowed; false once stopped.
  private func nextChange() -> Bool {
    changed.lock()
    defer { changed.unlock() }
    while true {
      let (allowed, done) = state.withLock { state -> (Bool, Bool) in
        guard !state.done, state.allowed > 0 else { return (false, state.done) }
        state.allowed -= 1
        return (true, false)
      }
      if allowed || done { return allowed }
      changed.wait()
    }
  }

  /// Creates, replaces and deletes items until stopped, through a new connection and session
  /// whenever secretd is gone.
  func write(as writer: Int, to secretd: KeptSecretd) throws {
    var step = 0
    var connection: (client: RawClient, session: String)?
    var mine: [[String: String]] = []
    while nextChange() {
      step += 1
      let secret =
        Array("secret \(writer)/\(step) ".utf8) + (0..<(step * 7 % 300)).map { UInt8(truncatingIfNeeded: $0) }
      let delete = step % 7 == 0 && !mine.isEmpty
      let attributes: [String: String]
      // At most 50 items each: then only changes and deletions, so the store stays small.
      if step % 4 == 0 || delete || mine.count >= 50, let earlier = mine.randomElement() {
        attributes = earlier
      } else {
        attributes = ["kept": "yes", "writer": "\(writer)", "n": "\(step)"]
        mine.append(attributes)
      }
      let sent: [UInt8]? = delete ? nil : secret
      let index = state.withLock { state -> Int in
        state.items[attributes, default: History()].sent.append(sent)
        return state.items[attributes, default: History()].sent.count - 1
      }
      do {
        if connection == nil {
          let client = try RawClient(address: secretd.instance.busAddress, destination: secretd.busName)
          connection = (client, try client.openPlainSession())
        }
        guard let (client, session) = connection else { continue }
        if delete {
          for path in try client.search(attributes) { try client.call(path, Interfaces.item, "Delete", .tuple([])) }
        } else {
          try client.createPlainItem(session: session, attributes: attributes, secret: secret, replace: true)
        }
        state.withLock { state in
          state.items[attributes]?.acknowledged = index
          state.acknowledgedCount += 1
        }
      } catch {
        // secretd died under the call: the change is unconfirmed. Allowed again, once secretd is back.
        connection = nil
        allow(1)
      }
    }
  }
}
