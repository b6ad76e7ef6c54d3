// Every persistent key keeps the same rules, decided once in SharedState's PersistentValue, and
// each is held to them here on the real thing: `.fileStorage` on the file system with inotify,
// `.appStorage` on a UserDefaults suite watched through its file, `.secret` on secretd and on
// gnome-keyring with their change signals, and on OpenBao's KV v2 polled. Another writer is
// another process each time.
import Foundation
import SecretTestSupport
import SecretsOpenBao
import Synchronization
import Testing

@testable import Secrets
@testable import SharedState

/// A store of one kind, on the real thing, with a way to write to it from outside.
enum Backend: String, CaseIterable, CustomStringConvertible, Sendable {
  case file
  case appStorage = "app storage"
  case secretd
  case gnomeKeyring = "gnome-keyring"
  case openBao = "OpenBao"

  var description: String { rawValue }
}

/// One stored value of a backend: a key on it, and another process that writes to it.
struct Stage: Sendable {
  /// A key of the stored value with the given window, made in the current environment.
  let key: @Sendable () -> any PersistenceProbe
  /// Writes `text` as another process would (for app storage: a number or a word).
  let writeOutside: @Sendable (String) throws -> Void
  /// What is stored now, as text; nil when nothing is.
  let stored: @Sendable () throws -> String?
  /// Copies kept of undecodable contents.
  let keptCopies: @Sendable () throws -> [String]
}

/// What the tests need of a key: the key, and its persistent core to wait on.
protocol PersistenceProbe: SharedKey where Value == Int {
  func shared(default value: Int) -> Shared<Int>
  var noticeCount: Int { get }
  func settle()
}

extension FileStorageKey: PersistenceProbe where Value == Int {
  func shared(default value: Int) -> Shared<Int> { Shared(wrappedValue: value, self) }
  var noticeCount: Int { core.noticeCount.load(ordering: .relaxed) }
  func settle() { core.settle() }
}

extension AppStorageKey: PersistenceProbe where Value == Int {
  func shared(default value: Int) -> Shared<Int> { Shared(wrappedValue: value, self) }
  var noticeCount: Int { core.noticeCount.load(ordering: .relaxed) }
  func settle() { core.settle() }
}

extension SecretKey: PersistenceProbe where Value == Int {
  func shared(default value: Int) -> Shared<Int> { Shared(wrappedValue: value, self) }
  var noticeCount: Int { probedCore.notices }
  func settle() { probedCore.settleReads() }
  /// A SecretKey's core is a `PersistentValue` over its store's own item type.
  private var probedCore: any ProbedCore { core as! any ProbedCore }
}

/// A persistent core's change notices, whatever its store type.
protocol ProbedCore {
  var notices: Int { get }
  func settleReads()
}

extension PersistentValue: ProbedCore {
  var notices: Int { noticeCount.load(ordering: .relaxed) }
  func settleReads() { settle() }
}

/// Runs `body` with a stage of `backend` and a manual write clock.
func withStage(_ backend: Backend, _ body: (Stage, TestWriteClock) async throws -> Void) async throws {
  let clock = TestWriteClock()
  var environment = SharedEnvironment.test(clock: clock)
  switch backend {
  case .file:
    let folder = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: folder) }
    environment.fileStorage = .fileSystem
    let url = folder.appending(path: "value.json")
    let stage = Stage(
      key: { FileStorageKey<Int>.fileStorage(url) },
      writeOutside: { text in
        let output = try runProcess(
          "sh", ["-c", "printf %s \"$1\" > \"$2.tmp\" && mv \"$2.tmp\" \"$2\"", "sh", text, url.path],
          environment: environmentWithoutBus, in: folder)
        guard output.status == 0 else { throw HarnessError("the outside write failed: \(output.stderrText)") }
      },
      stored: { try? String(contentsOf: url, encoding: .utf8) },
      keptCopies: {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".corrupt-") }
      })
    try await environment.withValue { try await body(stage, clock) }
  case .appStorage:
    let config = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] ?? ""
    try #require(
      config.contains(".build/test-config"),
      "UserDefaults suites live in $XDG_CONFIG_HOME: run the tests with `make test`, which points it at .build/test-config"
    )
    let suite = "secrets-test-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: "\(config)/\(suite).plist") }
    environment.defaults = .suite(suite)
    let stage = Stage(
      key: { AppStorageKey<Int>.appStorage("value") },
      writeOutside: { text in
        // A plain UserDefaults writer in another process; a word is written as a string.
        let output = try runProcess(
          try builtExecutable("SharedStateChild").path, ["defaults-set", "\(suite):value", text],
          environment: environmentWithoutBus, in: URL(filePath: config))
        guard output.status == 0 else { throw HarnessError("the outside write failed: \(output.stderrText)") }
      },
      stored: {
        let file = try? String(contentsOf: URL(filePath: "\(config)/\(suite).plist"), encoding: .utf8)
        return file.flatMap { plist in
          guard let range = plist.range(of: "<key>value</key>") else { return nil }
          let rest = plist[range.upperBound...].drop { $0.isWhitespace }
          guard let open = rest.firstIndex(of: ">"), let close = rest.range(of: "</") else { return nil }
          return String(rest[rest.index(after: open)..<close.lowerBound])
        }
      },
      keptCopies: {
        let plist = (try? String(contentsOf: URL(filePath: "\(config)/\(suite).plist"), encoding: .utf8)) ?? ""
        return plist.components(separatedBy: "<key>").dropFirst().compactMap { entry in
          let key = entry.prefix { $0 != "<" }
          return key.hasPrefix("value.undecodable-") ? String(key) : nil
        }
      })
    try await environment.withValue { try await body(stage, clock) }
  case .secretd, .gnomeKeyring:
    try await withProvider(backend == .secretd ? .secretd : .gnomeKeyring) { instance in
      environment.secretKeyStore = .secretService(instance.client())
      let stage = Stage(
        key: { SecretKey<Int>.secret(service: "rules", account: "a") },
        writeOutside: { text in try instance.store("rules", "a", text) },
        stored: {
          try instance.client().read(
            SecretClient.attributes(service: "rules", account: "a"), in: .default, exactly: true)?.text
        },
        keptCopies: {
          let found = try instance.run("secret-tool", ["search", "--all", "service", "rules", "account", "a"])
          // secret-tool prints the attributes on standard error.
          return (found.stdoutText + found.stderrText).split(separator: "\n").filter {
            $0.hasPrefix("attribute.backup = ")
          }.map(String.init)
        })
      try await environment.withValue { try await body(stage, clock) }
    }
  case .openBao:
    try await withOpenBao { server in
      environment.secretKeyStore = .openBao(
        OpenBaoConfiguration(
          addresses: [URL(string: server.address)].compactMap { $0 },
          authentication: .token(server.rootToken), pollInterval: .milliseconds(50), requestTimeout: .seconds(5)))
      let stage = Stage(
        key: { SecretKey<Int>.secret(service: "rules", account: "a") },
        writeOutside: { text in
          try server.bao(["kv", "put", "secret/rules/a", "value=-"], input: Array(text.utf8)).expectSuccess()
        },
        stored: {
          let output = try server.bao(["kv", "get", "-field=value", "secret/rules/a"])
          return output.status == 0 ? output.stdoutText : nil
        },
        keptCopies: {
          let output = try server.bao(["kv", "list", "-format=json", "secret/rules"])
          let names =
            output.status == 0 ? try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String] : nil
          return (names ?? []).filter { $0.hasPrefix("a.undecodable-") }
        })
      try await environment.withValue { try await body(stage, clock) }
    }
  }
}

/// Waits until `key` has had a change notice past `count`, then until its reads are done.
func waitForNotice(_ key: any PersistenceProbe, after count: Int) async throws {
  try await eventually("a change notice", seconds: 20) { key.noticeCount > count }
  key.settle()
}

@Suite("one rule set for every persistent key, on the real thing")
struct PersistenceRulesTests {
  @Test("the key's own writes do not come back as changes; another process's do", arguments: Backend.allCases)
  func ownWritesDoNotEcho(backend: Backend) async throws {
    try await withStage(backend) { stage, _ in
      let key = stage.key()
      // The key's subscriber itself records every value it yields (the `values` stream would
      // keep only the newest).
      let yields = Mutex<[Int?]>([])
      let subscription = key.subscribe(
        context: .initialValue(0),
        subscriber: SharedSubscriber { result in yields.withLock { $0.append(try? result.get()) } })
      defer { subscription.cancel() }
      let before = key.noticeCount
      try await save(1, with: key)
      try await waitForNotice(key, after: before)
      #expect(yields.withLock { $0 }.isEmpty, "the key's own write came back: \(yields.withLock { $0 })")
      let seen = key.noticeCount
      try stage.writeOutside("2")
      try await waitForNotice(key, after: seen)
      #expect(yields.withLock { $0 } == [2])
    }
  }

  @Test(
    "a local value waiting for its write wins over another process's change, and then overwrites it (OpenBao: is refused)",
    arguments: Backend.allCases)
  func localValueWaitingWins(backend: Backend) async throws {
    try await withStage(backend) { stage, clock in
      let key = stage.key()
      let shared = key.shared(default: 0)
      // Only once the window is open: app storage writes at once, so it has nothing waiting.
      guard backend != .appStorage else {
        shared.withLock { $0 = 1 }
        #expect(try stage.stored() == "1")
        return
      }
      // The first change is written at once and opens the window; the next one waits for it.
      // (OpenBao's keys write no change before its window closes: there the first one waits.)
      if backend != .openBao {
        shared.withLock { $0 = 5 }
        try await eventually("the first change written") { try stage.stored() == "5" }
      }
      shared.withLock { $0 = 1 }
      let before = key.noticeCount
      try stage.writeOutside("2")
      try await waitForNotice(key, after: before)
      #expect(shared.wrappedValue == 1, "the outside change replaced a value waiting for its write")
      #expect(try stage.stored() == "2")
      clock.advance(by: .seconds(1))
      guard backend != .openBao else {
        // Check-and-set refuses to write over a version this process has not read: the
        // waiting value and its one retry conflict, and the newer value is loaded instead.
        clock.advance(by: .seconds(1))
        try await eventually("the conflict reported and the newer value loaded") {
          shared.saveError is OpenBaoError && shared.wrappedValue == 2
        }
        #expect(try stage.stored() == "2")
        return
      }
      try await eventually("the local value written") { try stage.stored() == "1" }
      #expect(shared.wrappedValue == 1)
      // With nothing waiting, another process's change is shown again.
      let written = key.noticeCount
      try stage.writeOutside("3")
      try await waitForNotice(key, after: written)
      #expect(shared.wrappedValue == 3)
    }
  }

  @Test(
    "undecodable contents are a load error, and are kept before anything overwrites them", arguments: Backend.allCases)
  func undecodableContentsAreKept(backend: Backend) async throws {
    try await withStage(backend) { stage, clock in
      try stage.writeOutside("not-a-number")
      let key = stage.key()
      let shared = key.shared(default: 0)
      #expect(shared.loadError != nil)
      #expect(try stage.stored() == "not-a-number")
      #expect(try stage.keptCopies().isEmpty)
      shared.withLock { $0 = 5 }
      try await shared.save()
      #expect(try stage.stored() == "5")
      let copies = try stage.keptCopies()
      #expect(copies.count == 1, "\(copies)")
    }
  }

  @Test(
    "no mutation made in this process is lost, while the store's watcher reads back the key's own writes",
    arguments: Backend.allCases)
  func noMutationIsLostUnderTheWatcher(backend: Backend) async throws {
    try await withStage(backend) { stage, clock in
      let key = stage.key()
      let shared = key.shared(default: 0)
      // App storage writes every mutation at once; the others write the first of a batch at
      // once and the rest when the window closes, which the clock does every 100 mutations.
      let mutations = backend == .appStorage || backend == .file ? 10_000 : 1_000
      for round in 1...mutations {
        shared.withLock { $0 += 1 }
        if round % 100 == 0 { clock.advance(by: .seconds(1)) }
        #expect(shared.wrappedValue == round, "a mutation was lost")
        if shared.wrappedValue != round { break }
      }
      clock.advance(by: .seconds(1))
      try await eventually("the last value stored") { try stage.stored() == "\(mutations)" }
      #expect(shared.wrappedValue == mutations)
      // Another process writes last: every echo of the key's own writes is read before its
      // change (reads keep their order), and none of them takes its place.
      let seen = key.noticeCount
      try stage.writeOutside("\(mutations + 7)")
      try await waitForNotice(key, after: seen)
      #expect(shared.wrappedValue == mutations + 7)
    }
  }

  private func save(_ value: Int, with key: any PersistenceProbe) async throws {
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
      key.save(value, context: SaveContext.userInitiated, continuation: SaveContinuation { done.resume(with: $0) })
    }
  }
}
