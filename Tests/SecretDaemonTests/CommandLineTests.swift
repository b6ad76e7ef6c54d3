// secretd as a program: help, version, SIGTERM, limit flags.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("command line")
struct CommandLineTests {
  func run(_ arguments: [String]) throws -> ProcessOutput {
    try runProcess(
      secretdPath(), arguments, environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
  }

  @Test("--help, --version and a bad flag")
  func helpAndVersion() throws {
    let help = try run(["--help"])
    #expect(help.status == 0)
    for limit in Limit.allCases { #expect(help.stdoutText.contains(limit.flag), "\(limit.flag) missing from --help") }
    #expect(help.stdoutText.contains("--replace") && help.stdoutText.contains("--allow-replacement"))
    #expect(try run(["--version"]).stdoutText.hasPrefix("secretd "))
    let bad = try run(["--frobnicate"])
    #expect(bad.status == 2)
    #expect(bad.stderrText.contains("unknown option"))
  }

  @Test("SIGTERM exits cleanly with a log line")
  func sigterm() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let extra = try startSecretd(on: instance, busName: "org.example.secretd.term", [])
      #expect(extra.stop() == 0)
      let text = extra.stderrText
      #expect(text.contains("SIGTERM received"))
      #expect(text.split(separator: "\n").allSatisfy { $0.hasPrefix("secretd: ") })
    }
  }

  @Test("control characters in a logged message are escaped, so every message stays one line")
  func controlCharactersAreEscapedInLogLines() {
    #expect(Log.escaped("a\nb\u{0}c\r\u{1b}[2J\u{85}d\u{2028}") == "a\\u{a}b\\u{0}c\\u{d}\\u{1b}[2J\\u{85}d\\u{2028}")
    #expect(Log.escaped("plain ünïcode, no controls") == "plain ünïcode, no controls")
  }

  @Test("the log has one line per lifecycle event and never a secret, whatever the calls carried")
  func logNeverHoldsASecret() throws {
    let daemon = try StandaloneSecretd(["--max-secret-size", "64"])
    let secret = "logged-secret-" + randomToken(24)
    let oversized = "oversized-secret-" + randomToken(64)
    #expect(try daemon.run("secret-tool", ["store", "--label=l", "service", "log"], input: secret).status == 0)
    #expect(try daemon.run("secret-tool", ["lookup", "service", "log"]).stdoutText == secret)
    #expect(try daemon.run("secret-tool", ["store", "--label=l", "service", "big"], input: oversized).status != 0)
    #expect(try daemon.run("secret-tool", ["clear", "service", "log"]).status == 0)
    let client = try RawClient(address: daemon.bus.address)
    let created = try client.call(
      ObjectPaths.root, Interfaces.service, "CreateCollection", .tuple([.array(elementType: "{sv}", []), .string("")]))
    let collection = try #require(created.child(0)?.string)
    try client.call(collection, Interfaces.collection, "Delete", .tuple([]))
    #expect(daemon.stop() == 0)
    let lines = daemon.logText.split(separator: "\n")
    // Positive control: the log was captured, with the lifecycle events of this run.
    #expect(lines.contains { $0.contains("\(collection) created") }, "\(daemon.logText)")
    #expect(lines.contains { $0.contains("\(collection) deleted") }, "\(daemon.logText)")
    #expect(lines.contains { $0.contains("SIGTERM received") }, "\(daemon.logText)")
    #expect(lines.allSatisfy { $0.hasPrefix("secretd: ") }, "\(daemon.logText)")
    #expect(!daemon.logText.contains(secret) && !daemon.logText.contains(oversized))
  }

  @Test("every limit flag, set low, is answered with LimitsExceeded naming that flag", arguments: Limit.allCases)
  func everyLimitFlagNamesItself(limit: Limit) async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let name = "org.example.secretd.limit\(Limit.allCases.firstIndex(of: limit) ?? 0)"
      let limited = try startSecretd(on: instance, busName: name, [limit.flag, LimitProbe.setting(limit)])
      defer { limited.stop() }
      let client = try RawClient(address: instance.busAddress, destination: name)
      let session = try client.openPlainSession()
      if limit == .sessions {
        // Not a refusal: past the limit the least recently used session closes.
        _ = try client.openPlainSession()
        _ = try client.openPlainSession()
        #expect(client.errorName(session, Interfaces.session, "Close", .tuple([])) != nil, "the first session closed")
        return
      }
      var refusal: GLibError?
      for attempt in 0..<8 where refusal == nil {
        do throws(GLibError) {
          try LimitProbe.exceed(limit, client: client, session: session, attempt: attempt)
        } catch { refusal = error }
      }
      let error = try #require(refusal, "\(limit.flag) never refused a call; log: \(limited.stderrText)")
      #expect(error.remoteName == "org.freedesktop.DBus.Error.LimitsExceeded", "\(error.message)")
      #expect(error.message.contains(limit.flag), "\(error.message)")
      #expect(limited.process.isRunning)
    }
  }

  @Test("limit flags: --max-items answered with an error naming it")
  func limitFlags() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let name = "org.example.secretd.limited"
      let limited = try startSecretd(on: instance, busName: name, ["--max-items", "2"])
      let client = try RawClient(address: instance.busAddress, destination: name)
      let session = try client.openPlainSession()
      try client.createPlainItem(session: session, attributes: ["n": "1"], secret: [1])
      try client.createPlainItem(session: session, attributes: ["n": "2"], secret: [2])
      do throws(GLibError) {
        try client.createPlainItem(session: session, attributes: ["n": "3"], secret: [3])
        Issue.record("a third item was accepted")
      } catch {
        // Everything that tells a refusal from a timeout or a daemon that died.
        let context =
          "\(error.domainName) \(error.code) \(error.remoteName ?? "no remote name"): \(error.message); daemon running: \(limited.process.isRunning); its log: \(limited.stderrText)"
        #expect(error.remoteName == "org.freedesktop.DBus.Error.LimitsExceeded", "\(context)")
        #expect(error.message.contains("--max-items"), "\(context)")
      }
      #expect(limited.stop() == 0, "\(limited.stderrText)")
    }
  }
}

/// For each limit: a low setting, and calls that pass it within a few attempts.
enum LimitProbe {
  static func setting(_ limit: Limit) -> String {
    switch limit {
    case .secretSize, .attributeLength: "8"
    case .replySize, .memory: "256"
    default: "2"
    }
  }

  static func exceed(_ limit: Limit, client: RawClient, session: String, attempt: Int) throws(GLibError) {
    let attributes = ["n": "\(attempt)"]
    switch limit {
    case .secretSize:
      try client.createPlainItem(session: session, attributes: attributes, secret: Array("123456789".utf8))
    case .attributes:
      try client.createPlainItem(session: session, attributes: ["a": "1", "b": "2", "c": "3"], secret: [1])
    case .attributeLength: try client.createPlainItem(session: session, attributes: ["n": "123456789"], secret: [1])
    case .items, .sessions: try client.createPlainItem(session: session, attributes: attributes, secret: [1])
    case .allSessions:
      _ = try client.call(
        ObjectPaths.root, Interfaces.service, "OpenSession", .tuple([.string("plain"), .variant(.string(""))]))
    case .memory:
      try client.createPlainItem(session: session, attributes: attributes, secret: Array(repeating: 7, count: 100))
    case .collections:
      _ = try client.call(
        ObjectPaths.root, Interfaces.service, "CreateCollection",
        .tuple([.array(elementType: "{sv}", []), .string("")]))
    case .aliases:
      _ = try client.call(
        ObjectPaths.root, Interfaces.service, "SetAlias",
        .tuple([.string("alias\(attempt)"), .objectPath(ObjectPaths.collection("session"))]))
    case .pathsPerCall:
      let item = try client.createPlainItem(session: session, attributes: attributes, secret: [1])
      _ = try client.call(
        ObjectPaths.root, Interfaces.service, "GetSecrets",
        .tuple([.objectPaths([item, item + "x", item + "y"]), .objectPath(session)]))
    case .replySize:
      let item = try client.createPlainItem(
        session: session, attributes: attributes, secret: Array(repeating: 7, count: 1000))
      _ = try client.call(item, Interfaces.item, "GetSecret", .tuple([.objectPath(session)]))
    }
  }
}
