// After an item is deleted, its secret's bytes are nowhere in the daemon's memory.
import Foundation
import SecretTestSupport
import Testing

@Suite("memory hygiene")
struct MemoryHygieneTests {
  @Test("a deleted secret is wiped from the daemon's memory", .enabled(if: getuid() == 0, "reading another process's memory needs root"))
  func wipedAfterDelete() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let secret = "wipe-me-" + randomToken(40)
      #expect(try instance.secretTool(["store", "--label=wipe", "service", "wipe", "account", "a"], input: secret).status == 0)
      #expect(try instance.secretTool(["lookup", "service", "wipe", "account", "a"]).stdoutText == secret)
      // Positive control: the scan finds the live secret (so a negative result below means something).
      #expect(try processMemoryContains(pid: instance.pid, Array(secret.utf8)))
      #expect(try instance.secretTool(["clear", "service", "wipe", "account", "a"]).status == 0)
      #expect(try instance.secretTool(["lookup", "service", "wipe", "account", "a"]).status != 0)
      #expect(try !processMemoryContains(pid: instance.pid, Array(secret.utf8)))
    }
  }

  @Test("a replaced secret is wiped too", .enabled(if: getuid() == 0))
  func wipedAfterReplace() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let first = "first-" + randomToken(40)
      #expect(try instance.secretTool(["store", "--label=r", "service", "wipe2"], input: first).status == 0)
      #expect(try processMemoryContains(pid: instance.pid, Array(first.utf8)))
      #expect(try instance.secretTool(["store", "--label=r", "service", "wipe2"], input: "second").status == 0)
      #expect(try !processMemoryContains(pid: instance.pid, Array(first.utf8)))
    }
  }

  @Test("the daemon is not dumpable and has no core limit")
  func notDumpable() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let status = try String(contentsOfFile: "/proc/\(instance.pid)/limits", encoding: .utf8)
      let core = try #require(status.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
      #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first == "0")
      // A non-dumpable process's /proc files belong to root:root.
      let attributes = try FileManager.default.attributesOfItem(atPath: "/proc/\(instance.pid)/mem")
      #expect((attributes[.ownerAccountID] as? NSNumber)?.intValue == 0)
    }
  }
}
