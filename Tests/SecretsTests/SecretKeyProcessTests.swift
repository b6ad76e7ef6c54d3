import Foundation
import SecretTestSupport
import Secrets
import Testing

@Suite("SecretKey: whole processes")
struct SecretKeyProcessTests {
  /// How a child with a value waiting in its 600 s window (after a first change written at once)
  /// ends.
  enum Ending: String, CaseIterable, Sendable {
    case sigterm, sigint, normalExit

    var signal: Int32? { [.sigterm: SIGTERM, .sigint: SIGINT][self] }
  }

  @Test(arguments: Provider.all, Ending.allCases)
  func aPendingValueIsWrittenWhenTheProcessEnds(provider: Provider, ending: Ending) async throws {
    try await withProvider(provider) { instance in
      let output = instance.bus.directory.appending(path: "child-stdout")
      let stdout = open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
      let null = open("/dev/null", O_RDWR | O_CLOEXEC)
      defer { [stdout, null].forEach { close($0) } }
      let child = try ChildProcess(
        try builtExecutable("secrets-child"),
        [ending.signal == nil ? "exit" : "wait", ending.rawValue, "a", "written at exit"],
        environment: instance.environment, stdin: null, stdout: stdout, stderr: null)
      defer { child.signal(SIGKILL) }
      try await eventually("the child's pending mutation") {
        (try? String(contentsOf: output, encoding: .utf8))?.hasPrefix("pending\n") == true
      }
      if let signal = ending.signal {
        let before = try instance.run("secret-tool", ["lookup", "service", ending.rawValue, "account", "a"])
        #expect(before.stdoutText == #""first""#, "the first change was not written at once")
        child.signal(signal)
        #expect(child.wait() == 128 + signal, "the signal is handed back to its default action after the flush")
      } else {
        #expect(child.wait() == 0)
      }
      let lookup = try instance.run("secret-tool", ["lookup", "service", ending.rawValue, "account", "a"])
      #expect(lookup.stdoutText == #""written at exit""#)
    }
  }

  /// A child on the provider's bus: with live storage it calls the provider (the positive
  /// control); inside a test environment it makes no call at all.
  @Test(arguments: [false, true])
  func keysOnInMemoryStorageNeverCallTheProvider(inMemory: Bool) async throws {
    try await withProvider(.secretd) { instance in
      let members = ["OpenSession", "SearchItems", "CreateItem", "GetSecrets", "ReadAlias"]
      let calls = try await CallCounter(instance, members: members)
      let mode = inMemory ? "in-memory" : "exit"
      let output = try instance.run(try builtExecutable("secrets-child").path, [mode, "bus", "a", "v"])
      #expect(output.status == 0)
      #expect(output.stdoutText == (inMemory ? "pending\ndone\n" : "pending\n"))
      var total = 0
      for member in members { total += try await calls.count(member) }
      if inMemory {
        #expect(total == 0, "an in-memory key called the provider")
      } else {
        #expect(total > 0, "the live key made no call the monitor could see")
      }
    }
  }

  @Test(arguments: Provider.all)
  func theLoginExampleRunsAsTheReadmeSays(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let example = try builtExecutable("login-example").path
      #expect(try instance.run(example, ["status"]).stdoutText == "not logged in (last user: none, 0 logins)\n")
      #expect(try instance.run(example, ["login", "alice"]).stdoutText == "logged in as alice for an hour\n")
      #expect(try instance.run(example, ["status"]).stdoutText == "logged in as alice\n")
      let stored = try instance.run("secret-tool", ["lookup", "service", "com.example.login", "account", "session"])
      #expect(stored.stdoutText.contains(#""user":"alice""#))
      #expect(try instance.run(example, ["logout"]).stdoutText == "logged out\n")
      #expect(try instance.run(example, ["status"]).stdoutText == "not logged in (last user: alice, 1 logins)\n")
    }
  }
}

@Suite("The README's account picker")
struct AccountPickerExampleTests {
  @Test(arguments: Provider.all)
  func theListFollowsAccountsAddedAndRemovedByOtherProcesses(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let example = try builtExecutable("account-picker").path
      try instance.store("picker.example", "alice", "a")
      #expect(
        try instance.run(example, ["picker.example", "--once"]).stdoutText
          == "accounts for picker.example:\n  1. alice\n")
      let output = instance.bus.directory.appending(path: "picker-\(UUID().uuidString)")
      let file = open(output.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
      let null = open("/dev/null", O_RDWR | O_CLOEXEC)
      defer { [file, null].forEach { close($0) } }
      let picker = try ChildProcess(
        URL(filePath: example), ["picker.example"], environment: instance.environment, stdin: null, stdout: file,
        stderr: null)
      defer {
        picker.signal(SIGTERM)
        picker.wait()
      }
      @Sendable func printed() -> String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
      try await eventually("the first list") { printed().hasSuffix("  1. alice\n") }
      try instance.store("picker.example", "bob", "b")
      try await eventually("bob added") { printed().hasSuffix("  1. alice\n  2. bob\n") }
      _ = try instance.run("secret-tool", ["clear", "service", "picker.example", "account", "alice"])
      try await eventually("alice removed") { printed().hasSuffix("accounts for picker.example:\n  1. bob\n") }
    }
  }
}

@Suite("The README's SharedState example")
struct SharedStateExampleTests {
  @Test func settingsSurviveTheProcessAndInMemoryValuesDoNot() throws {
    let folder = URL(filePath: NSTemporaryDirectory()).appending(path: "shared-state-example-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let example = try builtExecutable("shared-state-example").path
    let environment = ["PATH": "/usr/bin:/bin", "HOME": folder.path]
    let first = try runProcess(example, [folder.path], environment: environment, in: folder)
    let second = try runProcess(example, [folder.path], environment: environment, in: folder)
    #expect(first.stdoutText == "launch 1, theme light, 1 request this run\n")
    #expect(second.stdoutText == "launch 2, theme light, 1 request this run\n")
    let saved =
      try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appending(path: "settings.json")))
      as? [String: Any]
    #expect(saved?["launches"] as? Int == 2)
  }
}
