// secret-tool (libsecret, DH sessions) against secretd on a private bus.
import Foundation
import SecretTestSupport
import Synchronization
import Testing

@testable import SecretDaemon

@Suite("secret-tool round trips")
struct SecretToolTests {
  @Test("store, lookup, search and clear text, Unicode and trailing newlines")
  func roundTrips() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let values = ["hunter2", "pässwörd ✓ 密码 🔑", "line one\nline two\n\n", " leading and trailing spaces ", "x"]
      for (index, value) in values.enumerated() {
        let stored = try instance.secretTool(
          ["store", "--label=item \(index)", "service", "rt", "account", "a\(index)"], input: value)
        #expect(stored.status == 0, "\(stored.stderrText)")
      }
      for (index, value) in values.enumerated() {
        let found = try instance.secretTool(["lookup", "service", "rt", "account", "a\(index)"])
        #expect(found.status == 0)
        #expect(found.stdout == Array(value.utf8))
      }
      let search = try instance.secretTool(["search", "--all", "service", "rt"])
      #expect(search.status == 0)
      #expect(search.stdoutText.contains("secret = hunter2"))
      #expect(search.stdoutText.components(separatedBy: "label = ").count - 1 == values.count)

      let cleared = try instance.secretTool(["clear", "service", "rt", "account", "a0"])
      #expect(cleared.status == 0)
      #expect(try instance.secretTool(["lookup", "service", "rt", "account", "a0"]).status != 0)
      #expect(try instance.secretTool(["lookup", "service", "rt", "account", "a1"]).stdout == Array(values[1].utf8))
    }
  }

  @Test("storing the same attributes again replaces the secret")
  func replace() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      _ = try instance.secretTool(["store", "--label=first", "service", "rep", "account", "x"], input: "one")
      _ = try instance.secretTool(["store", "--label=second", "service", "rep", "account", "x"], input: "two")
      #expect(try instance.secretTool(["lookup", "service", "rep", "account", "x"]).stdoutText == "two")
      let search = try instance.secretTool(["search", "--all", "service", "rep"])
      #expect(search.stdoutText.components(separatedBy: "label = ").count - 1 == 1)
    }
  }

  @Test("the session collection by alias")
  func sessionCollection() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let stored = try instance.secretTool(
        ["store", "--label=in session", "--collection=session", "service", "sc", "account", "a"], input: "in session")
      #expect(stored.status == 0, "\(stored.stderrText)")
      #expect(try instance.secretTool(["lookup", "service", "sc", "account", "a"]).stdoutText == "in session")
      let client = try RawClient(address: instance.busAddress)
      let path = try #require(try client.search(["service": "sc"]).first)
      #expect(path.hasPrefix("/org/freedesktop/secrets/collection/session/"))
    }
  }

  @Test("600 separate secret-tool lookups, each with a fresh DH session, all read the right value")
  func manyLookups() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let value = "many-lookups-" + randomToken(24)
      #expect(
        try instance.secretTool(["store", "--label=many", "service", "many", "account", "a"], input: value).status == 0)
      let failures = Mutex(0)
      try await onOwnThread {
        DispatchQueue.concurrentPerform(iterations: 600) { _ in
          let output = try? instance.secretTool(["lookup", "service", "many", "account", "a"])
          if output?.status != 0 || output?.stdoutText != value { failures.withLock { $0 += 1 } }
        }
      }
      #expect(failures.withLock { $0 } == 0)
      // Every session is closed once its secret-tool has left the bus (the daemon hears of that
      // through NameOwnerChanged, so it may come a moment after the last lookup returned).
      let address = instance.busAddress
      try await eventually("every session closed") { try openSessions(address: address).isEmpty }
      // Positive control: a session whose client is still connected is listed.
      let holder = try RawClient(address: address)
      let held = try holder.openPlainSession()
      #expect(try openSessions(address: address) == [String(held.split(separator: "/").last ?? "")])
    }
  }

  /// The sessions secretd lists under its session folder, by name.
  private func openSessions(address: String) throws -> [String] {
    let introspection = try RawClient(address: address).call(
      "/org/freedesktop/secrets/session", "org.freedesktop.DBus.Introspectable", "Introspect", .tuple([]))
    return (introspection.child(0)?.string ?? "").components(separatedBy: "<node name=\"").dropFirst().map {
      String($0.prefix { $0 != "\"" })
    }
  }
}
