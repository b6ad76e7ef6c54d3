// Memory has one budget, sized from the locked memory secretd may use; collections and aliases
// are bounded; a secret that cannot be locked is refused, not kept where it could be swapped.
import Foundation
import SecretTestSupport
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("memory budget")
struct MemoryBudgetTests {
  @Test("past --max-memory a store is refused with LimitsExceeded naming it; what is stored stays")
  func budget() async throws {
    let daemon = try StandaloneSecretd(["--max-memory", "4096"])
    let first = String(repeating: "a", count: 3000)
    #expect(try daemon.run("secret-tool", ["store", "--label=1", "n", "1"], input: first).status == 0)
    let second = try daemon.run(
      "secret-tool", ["store", "--label=2", "n", "2"], input: String(repeating: "b", count: 3000))
    #expect(second.status != 0)
    #expect(second.stderrText.contains("--max-memory"), "\(second.stderrText)")
    #expect(try daemon.run("secret-tool", ["lookup", "n", "1"]).stdoutText == first)
    // Deleting frees the budget again.
    #expect(try daemon.run("secret-tool", ["clear", "n", "1"]).status == 0)
    #expect(
      try daemon.run("secret-tool", ["store", "--label=2", "n", "2"], input: String(repeating: "b", count: 3000)).status
        == 0)
  }

  @Test(
    "the store counts each record at its block's real size in the arena (a 1-byte secret too), and gives back what a delete or a replace frees"
  )
  func accounting() throws {
    var limits = Limits(maxMemory: 400)
    limits.maxItems = 10
    let store = try makeStore(limits: limits)
    let base = store.usedBytes
    #expect(base == store.arena.usedBytes && base > 0, "the session collection and its aliases are counted")
    let item = try store.createItem(
      in: "session", label: "ab", attributes: ["k": "vv"], contentType: "t", secret: sent("12345"),
      replace: false)
    // 32 bytes of block header, 64 of fixed fields, 2 + 1 + (8 + 1 + 2) of texts, 5 of secret: 115, in 16s.
    #expect(store.usedBytes == base + 128)
    _ = try store.createItem(
      in: "session", label: "", attributes: ["k": "vv"], contentType: "t", secret: sent("1"), replace: true)
    #expect(store.usedBytes == base + 112)
    #expect(throws: StoreError.limitExceeded(.memory, actual: base + 112 + 192, maximum: 400)) {
      try store.createItem(
        in: "session", label: "", attributes: [:], contentType: "",
        secret: sent(String(repeating: "x", count: 96)), replace: false)
    }
    try store.deleteItem(ItemReference(collection: "session", item: item.item))
    #expect(store.usedBytes == base)
  }

  @Test(
    "20,000 creates, replaces and deletes of secrets of random sizes fit in a 64 KiB budget: freed blocks are joined and reused, so the arena holds the live items, not their history"
  )
  func freedSpaceIsReused() throws {
    let store = try makeStore(limits: Limits(maxMemory: 64 << 10))
    let base = store.usedBytes
    var generator = SystemRandomNumberGenerator()
    var live: [String: Int] = [:]
    for step in 0..<20_000 {
      let name = "n\(Int.random(in: 0..<40, using: &generator))"
      if step % 5 == 4, let number = live.removeValue(forKey: name) {
        try store.deleteItem(ItemReference(collection: "session", item: number))
        continue
      }
      let secret = String(repeating: "s", count: Int.random(in: 1...600, using: &generator))
      live[name] =
        try store.createItem(
          in: "session", label: name, attributes: ["name": name], contentType: "text/plain", secret: sent(secret),
          replace: true
        ).item
    }
    #expect(store.usedBytes == store.arena.usedBytes)
    for number in live.values { try store.deleteItem(ItemReference(collection: "session", item: number)) }
    #expect(store.usedBytes == base)
    // Every freed block joined its neighbours again: no two free blocks lie side by side, and
    // all that is not used is free.
    var (offset, free, previousWasFree) = (ArenaLayout.headerSize, 0, false)
    while offset < store.arena.size {
      let word = ArenaLayout.BlockWord(decoding: store.arena.load(at: offset), at: offset, legacy: false)
      let isFree = word?.state == .free
      #expect(!(isFree && previousWasFree), "two free blocks side by side at \(offset)")
      if isFree { free += store.arena.blockSize(at: offset) }
      (offset, previousWasFree) = (offset + store.arena.blockSize(at: offset), isFree)
    }
    #expect(free == store.arena.capacity - base)
  }

  @Test("collections and aliases are bounded by --max-collections and --max-aliases")
  func collectionsAndAliases() throws {
    var limits = Limits()
    (limits.maxCollections, limits.maxAliases) = (3, 4)
    let store = try makeStore(limits: limits)
    _ = try store.createCollection(label: "one", alias: "")
    let two = try store.createCollection(label: "two", alias: "second")
    #expect(throws: StoreError.limitExceeded(.collections, actual: 4, maximum: 3)) {
      try store.createCollection(label: "three", alias: "")
    }
    try store.setAlias("fourth", to: two)
    #expect(throws: StoreError.limitExceeded(.aliases, actual: 5, maximum: 4)) { try store.setAlias("fifth", to: two) }
    try store.setAlias("fourth", to: "session")  // moving an alias is not a new one
    #expect(DBusError(StoreError.limitExceeded(.aliases, actual: 5, maximum: 4)).message.contains("--max-aliases"))
  }

  @Test("a locked-memory limit too small for secrets gives a budget too small for them: refused, naming --max-memory")
  func budgetFromTheLimit() async throws {
    for limit in [2 << 20, 8 << 20, 64 << 20] {
      let limits = Limits(maxMemory: Limits.memoryBudget(lockedMemoryLimit: limit))
      #expect(limits.maxMemory > 0 && limits.arenaSize + Limits.lockedOutsideTheStore <= limit, "\(limit)")
    }
    #expect(Limits.memoryBudget(lockedMemoryLimit: 1 << 20) == 0)
    #expect(Limits.memoryBudget(lockedMemoryLimit: nil) == 1 << 30)
    let daemon = try StandaloneSecretd(lockedMemory: 1 << 20)
    #expect(daemon.logText.contains("memory budget 0 bytes"), "\(daemon.logText)")
    let stored = try daemon.run("secret-tool", ["store", "--label=x", "k", "v"], input: "x")
    #expect(stored.status != 0 && stored.stderrText.contains("--max-memory"), "\(stored.stderrText)")
    #expect(daemon.process.isRunning)
  }

  @Test(
    "where the store's memory cannot be locked secretd does not start, naming LimitMEMLOCK; --allow-unlocked-memory starts it and says so",
    .needsRoot("RLIMIT_MEMLOCK binds only a user without CAP_IPC_LOCK: secretd runs as nobody"))
  func lockingFails() async throws {
    let nobody = StandaloneSecretd.nobody
    do {
      _ = try StandaloneSecretd(["--max-memory", "1M"], user: nobody, lockedMemory: 16 << 10)
      Issue.record("secretd started with a store it cannot lock")
    } catch {
      let text = "\(error)"
      #expect(text.contains("LimitMEMLOCK") && text.contains("--allow-unlocked-memory"), "\(text)")
    }
    let lenient = try StandaloneSecretd(
      ["--max-memory", "1M", "--allow-unlocked-memory"], user: nobody, lockedMemory: 16 << 10)
    #expect(lenient.logText.contains("unlocked memfd that may be swapped"), "\(lenient.logText)")
    #expect(try lenient.run("secret-tool", ["store", "--label=x", "k", "v"], as: nobody, input: "kept").status == 0)
    #expect(try lenient.run("secret-tool", ["lookup", "k", "v"], as: nobody).stdoutText == "kept")
  }

  /// The documented cap of all clients' sessions (`--max-sessions-total`).
  static let sessionCap = 4096

  /// The locked memory process `pid` holds (VmLck in /proc/PID/status), in bytes.
  static func lockedMemory(of pid: pid_t) throws -> Int {
    let status = try readProcFile("/proc/\(pid)/status")
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmLck:") }),
      let kibibytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
    else { throw HarnessError("no VmLck in /proc/\(pid)/status") }
    return kibibytes << 10
  }

  @Test(
    "64 connections opening 1,024 DH sessions each hold exactly the cap, 4,096, 64 each; a newcomer's session evicts the least recently used one; secretd's locked memory grows by the slabs of the keys and the key agreement's scratch at most; another client still stores at 2 MiB of locked memory",
    .needsRoot("RLIMIT_MEMLOCK binds only a user without CAP_IPC_LOCK: secretd and its clients run as nobody"))
  func sessionFloodLeavesRoomToStore() async throws {
    let nobody = StandaloneSecretd.nobody
    let daemon = try StandaloneSecretd(user: nobody, lockedMemory: 2 << 20)
    let pid = daemon.process.pid
    #expect(try readProcFile("/proc/\(pid)/comm") == "secretd\n", "the process measured is secretd itself")
    #expect(Limits(maxMemory: 0).maxSessions == Self.sessionCap, "the default cap is the documented one")
    let lockedBefore = try Self.lockedMemory(of: pid)
    let publicKey = try DiffieHellman.makeKeyPair().publicKey.map { String(format: "%02x", $0) }.joined()
    // The connections stay open while a newcomer opens a session and secret-tool, another
    // client, stores and reads. Sessions are counted by introspecting their parent node.
    let flood = """
      import json, re, subprocess, sys
      from jeepney import DBusAddress, new_method_call, DBusErrorResponse
      from jeepney.wrappers import unwrap_msg
      from jeepney.io.blocking import open_dbus_connection
      service = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets',
                            interface='org.freedesktop.Secret.Service')
      sessions = DBusAddress('/org/freedesktop/secrets/session', bus_name='org.freedesktop.secrets',
                             interface='org.freedesktop.DBus.Introspectable')
      key, pid = bytes.fromhex(sys.argv[1]), sys.argv[2]
      def open_session(connection):
          call = new_method_call(service, 'OpenSession', 'sv',
                                 ('dh-ietf1024-sha256-aes128-cbc-pkcs7', ('ay', key)))
          return unwrap_msg(connection.send_and_get_reply(call))[1]
      def open_paths(connection):
          xml = unwrap_msg(connection.send_and_get_reply(new_method_call(sessions, 'Introspect')))[0]
          return set(sessions.object_path + '/' + name for name in re.findall(r'<node name="(s[0-9]+)"', xml))
      def locked_bytes():
          with open('/proc/%s/status' % pid) as status:
              return next(int(line.split()[1]) << 10 for line in status if line.startswith('VmLck:'))
      connections = [open_dbus_connection(bus='SESSION') for _ in range(64)]
      opened = [[] for _ in connections]
      refused, other = 0, set()
      for index, connection in enumerate(connections):
          for _ in range(1024):
              try:
                  opened[index].append(open_session(connection))
              except DBusErrorResponse as error:
                  if error.name == 'org.freedesktop.DBus.Error.LimitsExceeded':
                      refused += 1
                  else:
                      other.add(error.name)
      flooded = open_paths(connections[0])
      held = [len([path for path in paths if path in flooded]) for paths in opened]
      # Each connection's least recently used session: the first it opened of those still open.
      oldest = [next((path for path in paths if path in flooded), None) for paths in opened]
      newcomer = open_dbus_connection(bus='SESSION')
      newcomers_session = open_session(newcomer)
      after = open_paths(newcomer)
      locked = locked_bytes()
      store = subprocess.run(['secret-tool', 'store', '--label=x', 'after', 'flood'],
                             input=b'stored-after-the-flood', capture_output=True)
      lookup = subprocess.run(['secret-tool', 'lookup', 'after', 'flood'], capture_output=True)
      print(json.dumps({'opened': sum(len(paths) for paths in opened), 'refused': refused, 'other': sorted(other),
                        'held': held, 'open': len(flooded), 'openWithNewcomer': len(after),
                        'newcomerHolds': newcomers_session in after, 'gone': sorted(flooded - after),
                        'leastRecentlyUsed': [path for path in oldest if path], 'locked': locked,
                        'store': store.returncode, 'error': store.stderr.decode(),
                        'lookup': lookup.stdout.decode()}))
      """
    let script = daemon.folder.appending(path: "flood.py")
    try flood.write(to: script, atomically: true, encoding: .utf8)
    chmod(script.path, 0o644)
    let run = try daemon.run(SecretStorageSuiteTests.python, [script.path, publicKey, "\(pid)"], as: nobody)
    struct Outcome: Decodable {
      let opened: Int
      let refused: Int
      let other: [String]
      let held: [Int]
      let open: Int
      let openWithNewcomer: Int
      let newcomerHolds: Bool
      let gone: [String]
      let leastRecentlyUsed: [String]
      let locked: Int
      let store: Int
      let error: String
      let lookup: String
    }
    try #require(run.status == 0, "\(run.stderrText)")
    let outcome = try JSONDecoder().decode(Outcome.self, from: Data(run.stdout))
    // Every call was answered: a session, or LimitsExceeded.
    #expect(
      outcome.opened + outcome.refused == 64 * 1024 && outcome.refused > 0, "\(outcome.opened) \(outcome.refused)")
    #expect(outcome.other.isEmpty, "no error but LimitsExceeded: \(outcome.other)")
    // Exactly the cap is open, shared evenly: each connection ended with the cap's 64th.
    #expect(outcome.open == Self.sessionCap, "sessions open after the flood")
    #expect(outcome.held == Array(repeating: Self.sessionCap / 64, count: 64), "sessions each connection holds")
    // The newcomer got one by eviction: still exactly the cap, one flood session gone, and that
    // one the least recently used of its connection.
    #expect(outcome.newcomerHolds && outcome.openWithNewcomer == Self.sessionCap, "\(outcome.openWithNewcomer)")
    #expect(outcome.gone.count == 1 && outcome.gone.allSatisfy(outcome.leastRecentlyUsed.contains), "\(outcome.gone)")
    // Locked memory comes in 64 KiB slabs, one size class per slab. Each session's 16-byte key
    // takes a 32-byte block: the flood may add the slabs of the cap's keys and of one more, made
    // while the session it evicts is still open (4,097 keys, 3 slabs), and a slab for each of
    // the key agreement's two scratch blocks (the 128-byte shared secret, HKDF's 64 bytes),
    // beyond what secretd locked at start (its arena and libgcrypt's pool).
    let (keyBlock, slab) = (32, 64 << 10)
    let keysBound = ((Self.sessionCap + 1) * keyBlock + slab - 1) / slab * slab + 2 * slab
    #expect(outcome.locked > lockedBefore, "the flood's keys are in locked memory (positive control)")
    #expect(
      outcome.locked - lockedBefore <= keysBound,
      "locked memory grew from \(lockedBefore) to \(outcome.locked) bytes; the keys of \(Self.sessionCap + 1) sessions and the scratch blocks take \(keysBound)"
    )
    #expect(outcome.store == 0, "\(outcome.error) \(daemon.logText)")
    #expect(outcome.lookup == "stored-after-the-flood")
  }
}
