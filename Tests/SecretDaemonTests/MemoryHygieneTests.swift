// After an item is deleted, its secret's bytes are nowhere in the daemon's memory.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("memory hygiene")
struct MemoryHygieneTests {
  @Test(
    "a stored secret cannot be read from secretd's memory through /proc/PID/mem as root, where a helper's ordinary copy is found",
    .needsRoot("reading another process's memory needs root"))
  func secretMemoryIsUnreadable() async throws {
    let daemon = try StandaloneSecretd()
    #expect(daemon.logText.contains("of memfd_secret"), "\(daemon.logText)")
    let secret = "unreadable-" + randomToken(40)
    #expect(try daemon.run("secret-tool", ["store", "--label=s", "service", "unreadable"], input: secret).status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "unreadable"]).stdoutText == secret)
    // Positive control: the same scan finds the bytes in a helper's ordinary memory.
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    let helper = try ChildProcess(
      try resolveExecutable("sleep"), ["60"], environment: ["HELD": secret], stdin: null, stdout: null, stderr: null)
    defer {
      helper.signal(SIGKILL)
      helper.wait()
    }
    #expect(try processMemoryContains(pid: helper.pid, Array(secret.utf8)))
    #expect(try !processMemoryContains(pid: daemon.process.pid, Array(secret.utf8)))
    let arena = try processMappings(pid: daemon.process.pid).filter { $0.name.hasPrefix("/secretmem") }
    #expect(arena.count == 1 && arena.allSatisfy(\.isLocked), "\(arena)")
  }

  @Test(
    "where memfd_secret is refused the store is a locked memfd, said at start, and every mapping holding a stored secret is locked",
    .needsRoot("reading another process's memory needs root"))
  func fallbackIsLocked() async throws {
    let daemon = try StandaloneSecretd(secretMemory: false)
    #expect(daemon.logText.contains("a locked, sealed memfd (memfd_secret refused here)"), "\(daemon.logText)")
    let secret = "locked-" + randomToken(40)
    #expect(try daemon.run("secret-tool", ["store", "--label=s", "service", "locked"], input: secret).status == 0)
    let holding = try processMappings(pid: daemon.process.pid, containing: Array(secret.utf8))
    // Positive control: a memfd is readable, so the stored secret is found, in the arena alone.
    #expect(!holding.isEmpty)
    #expect(holding.allSatisfy { $0.isLocked && $0.name.contains("memfd:secretd-arena") }, "\(holding)")
  }

  @Test(
    "Lock leaves no decrypted secret of the persistent collection in secretd's memory, where the unlocked store held it",
    .needsRoot("reading another process's memory needs root"))
  func lockWipesThePersistentCollection() async throws {
    let data = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: data) }
    let daemon = try StandaloneSecretd(["--persistent", "--data-folder", data.path], secretMemory: false)
    let secretctl = try builtExecutable("secretctl").path
    #expect(try daemon.run(secretctl, ["unlock", "--password-stdin"], input: "passphrase").status == 0)
    let secret = "sealed-" + randomToken(40)
    #expect(try daemon.run("secret-tool", ["store", "--label=s", "service", "sealed"], input: secret).status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "sealed"]).stdoutText == secret)
    // Positive control: unlocked, the item is in the (readable, locked) memfd store.
    #expect(try processMemoryContains(pid: daemon.process.pid, Array(secret.utf8)))
    #expect(try daemon.run(secretctl, ["lock"]).status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "sealed"]).stdoutText.isEmpty)
    #expect(try !processMemoryContains(pid: daemon.process.pid, Array(secret.utf8)))
    // And it comes back, from the sealed log, with the passphrase.
    #expect(try daemon.run(secretctl, ["unlock", "--password-stdin"], input: "passphrase").status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "sealed"]).stdoutText == secret)
  }

  @Test(
    "a deleted secret is wiped from the daemon's memory",
    .needsRoot("reading another process's memory needs root"))
  func wipedAfterDelete() async throws {
    let daemon = try StandaloneSecretd(secretMemory: false)
    let secret = "wipe-me-" + randomToken(40)
    let store = ["store", "--label=wipe", "service", "wipe", "account", "a"]
    #expect(try daemon.run("secret-tool", store, input: secret).status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "wipe", "account", "a"]).stdoutText == secret)
    // Positive control: the scan finds the live secret (so a negative result below means something).
    #expect(try processMemoryContains(pid: daemon.process.pid, Array(secret.utf8)))
    #expect(try daemon.run("secret-tool", ["clear", "service", "wipe", "account", "a"]).status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "wipe", "account", "a"]).status != 0)
    #expect(try !processMemoryContains(pid: daemon.process.pid, Array(secret.utf8)))
  }

  @Test(
    "a secret stored, read and deleted over a plain session is found nowhere in the daemon's memory",
    .needsRoot("reading another process's memory needs root"))
  func plainSessionLeavesNothing() async throws {
    let daemon = try StandaloneSecretd(secretMemory: false)
    let client = try RawClient(address: daemon.bus.address)
    let session = try client.openPlainSession()
    let secret = Array(("plain-" + randomToken(40)).utf8)
    let item = try client.createPlainItem(session: session, attributes: ["plain": "yes"], secret: secret)
    #expect(try client.plainSecret(item, session: session) == secret)
    // Positive control: the live secret is found.
    #expect(try processMemoryContains(pid: daemon.process.pid, secret))
    try client.call(item, Interfaces.item, "Delete", .tuple([]))
    // The scrub message that covers the bus reader's buffer is sent after the answer; a call
    // answered after it shows it has been read.
    _ = try client.search(["plain": "yes"])
    #expect(try !processMemoryContains(pid: daemon.process.pid, secret))
  }

  @Test(
    "a session's AES key lives only in locked memory and is wiped when the session closes",
    .needsRoot("reading another process's memory needs root"))
  func sessionKeyLockedAndWiped() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openDHSession()
      let key = session.key.withUnsafeBytes { Array($0) }
      let holding = try processMappings(pid: instance.pid, containing: key)
      // Positive control: the daemon's copy of the key is found while the session is open.
      #expect(!holding.isEmpty)
      #expect(holding.allSatisfy { $0.isLocked }, "\(holding)")
      try client.call(session.path, Interfaces.session, "Close", .tuple([]))
      _ = try client.search(["after": "close"])
      #expect(try processMappings(pid: instance.pid, containing: key).isEmpty)
    }
  }

  @Test("a replaced secret is wiped too", .needsRoot("reading another process's memory needs root"))
  func wipedAfterReplace() async throws {
    let daemon = try StandaloneSecretd(secretMemory: false)
    let first = "first-" + randomToken(40)
    #expect(try daemon.run("secret-tool", ["store", "--label=r", "service", "wipe2"], input: first).status == 0)
    #expect(try processMemoryContains(pid: daemon.process.pid, Array(first.utf8)))
    #expect(try daemon.run("secret-tool", ["store", "--label=r", "service", "wipe2"], input: "second").status == 0)
    #expect(try !processMemoryContains(pid: daemon.process.pid, Array(first.utf8)))
  }

  @Test(
    "the daemon is not dumpable and has no core limit",
    .needsRoot("runs the daemon as another user, which needs root"))
  func notDumpable() async throws {
    // As root every /proc file belongs to root; run as nobody, a dumpable daemon's would belong
    // to nobody and a non-dumpable one's still to root.
    let bus = try PrivateBus(everyUser: true)
    defer { bus.stop() }
    // A copy in the bus's world-readable folder, in case the build folder is private. Made by
    // `cp`, so that no child another test spawns meanwhile inherits a descriptor writing to it
    // (exec would then fail with "Text file busy").
    let secretd = bus.directory.appending(path: "secretd")
    let copy = try runProcess(
      "cp", [secretdPath(), secretd.path], environment: environmentWithoutBus, in: bus.directory)
    try #require(copy.status == 0, "\(copy.stderrText)")
    let log = bus.directory.appending(path: "secretd.log")
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    let logFile = open(log.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    defer { [null, logFile].forEach { close($0) } }
    let daemon = try ChildProcess(
      try resolveExecutable("setpriv"),
      ["--reuid=65534", "--regid=65534", "--clear-groups", secretd.path, "--address", bus.address],
      environment: [:], stdin: null, stdout: null, stderr: logFile)
    defer {
      daemon.signal(SIGTERM)
      daemon.wait()
    }
    let wait = try runProcess(
      "gdbus", ["wait", "--address", bus.address, "--timeout", "20", "org.freedesktop.secrets"], input: nil,
      environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
    try #require(
      wait.status == 0,
      "secretd did not start as nobody (running: \(daemon.isRunning)): \((try? String(contentsOf: log, encoding: .utf8)) ?? "") \(wait.stderrText)"
    )

    let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
    #expect(status.split(separator: "\n").contains { $0.hasPrefix("Uid:\t65534") })
    let limits = try String(contentsOfFile: "/proc/\(daemon.pid)/limits", encoding: .utf8)
    let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
    let fields = core.split(separator: " ", omittingEmptySubsequences: true)
    #expect(fields.dropFirst(4).first == "0" && fields.dropFirst(5).first == "0", "soft and hard: \(core)")
    let memory = try FileManager.default.attributesOfItem(atPath: "/proc/\(daemon.pid)/mem")
    #expect((memory[.ownerAccountID] as? NSNumber)?.intValue == 0)
  }
}
