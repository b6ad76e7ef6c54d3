import Foundation
import SecretClient
import SecretTestSupport
import Testing

@Suite("lock, unlock, status through the binary")
struct CollectionCommandTests {
  @Test(arguments: Provider.all)
  func statusNamesTheProviderAndItsCollections(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "counted", "a"], input: "x")
      let status = try secretctl(instance, ["status"])
      #expect(status.status == 0)
      #expect(status.stdoutText.contains("provider: org.freedesktop.secrets owned by :"))
      #expect(status.stdoutText.contains("pid \(instance.pid)"))
      #expect(status.stdoutText.contains("unlocked, 1 item, default"))

      let json = try secretctl(instance, ["status", "--json"])
      let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
      let providerObject = try #require(object["provider"] as? [String: Any])
      #expect(providerObject["pid"] as? Int == Int(instance.pid))
      #expect(providerObject["supportsExpiry"] as? Bool == (provider == .secretd))
      let collections = try #require(object["collections"] as? [[String: Any]])
      let defaultPath = try await instance.client().path(of: .default)
      #expect(object["defaultCollection"] as? String == defaultPath)
      let defaultCollection = try #require(collections.first { $0["path"] as? String == defaultPath })
      #expect(defaultCollection["items"] as? Int == 1)
      #expect(defaultCollection["locked"] as? Bool == false)
    }
  }

  @Test("status shows where secretd keeps its store and how much of its budget is used and free")
  func statusShowsSecretdsStore() async throws {
    try await withProvider(.secretd, arguments: ["--max-memory", "8M"]) { instance in
      let empty = try secretctl(instance, ["status", "--json"])
      let before = try #require(try JSONSerialization.jsonObject(with: Data(empty.stdout)) as? [String: Any])
      let usedBefore = try #require((before["store"] as? [String: Any])?["used"] as? Int)
      #expect(try secretctl(instance, ["set", "big", "one"], input: String(repeating: "x", count: 4000)).status == 0)
      let status = try secretctl(instance, ["status"])
      #expect(status.stdoutText.contains("as uid \(getuid()) (you)"), "\(status.stdoutText)")
      #expect(status.stdoutText.contains("store: memfd_secret"), "\(status.stdoutText)")
      #expect(status.stdoutText.contains("in this process only"), "no service manager here: \(status.stdoutText)")
      #expect(status.stdoutText.contains(" free of 8 MiB (--max-memory)"), "\(status.stdoutText)")
      let json = try secretctl(instance, ["status", "--json"])
      let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
      let store = try #require(object["store"] as? [String: Any])
      #expect(store["budget"] as? Int == 8 << 20)
      let used = try #require(store["used"] as? Int)
      #expect(used >= usedBefore + 4000 && store["free"] as? Int == (8 << 20) - used, "\(store)")
      #expect(store["kept"] as? Bool == false && (store["rejected"] as? [Any])?.isEmpty == true)
    }
    try await withProvider(.gnomeKeyring) { instance async throws in
      let status = try secretctl(instance, ["status"]).stdoutText
      #expect(!status.contains("memory budget") && !status.contains("store:"), "\(status)")
    }
  }

  @Test(
    "gnome-keyring without a login keyring: set, lock and status name a provider with no default collection and say what to do"
  )
  func aProviderWithoutADefaultCollectionIsNamedAsSuch() async throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let home = bus.directory.appending(path: "home")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    let environment = [
      "DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin", "HOME": home.path,
      "XDG_RUNTIME_DIR": home.path, "XDG_DATA_HOME": home.appending(path: "data").path,
    ]
    let null = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { close(null) }
    // Without --unlock and with an empty home, gnome-keyring makes no login keyring.
    let keyring = try ChildProcess(
      try resolveExecutable("gnome-keyring-daemon"), ["--foreground", "--components=secrets"],
      environment: environment, stdin: null, stdout: null, stderr: null)
    defer {
      keyring.signal(SIGTERM)
      keyring.wait()
    }
    let wait = try runProcess(
      "gdbus", ["wait", "--session", "--timeout", "20", "org.freedesktop.secrets"], environment: environment,
      in: bus.directory)
    try #require(wait.status == 0)
    func run(_ arguments: [String], input: String? = nil) throws -> ProcessOutput {
      try runProcess(
        try secretctlPath(), arguments, input: input.map { Array($0.utf8) }, environment: environment, in: bus.directory
      )
    }
    for result in [try run(["set", "act", "test"], input: "x"), try run(["lock"])] {
      #expect(result.status == 3 && result.stderrIsOneMessage)
      #expect(result.stderrText.contains("gnome-keyring-daemon) has no default collection"), "\(result.stderrText)")
      #expect(result.stderrText.contains("--collection session"))
      #expect(!result.stderrText.contains("Check the collection name"))
    }
    #expect(try run(["status"]).stdoutText.contains("default collection: none"))
    // What the message advises works.
    #expect(try run(["set", "--collection", "session", "act", "test"], input: "x").status == 0)
    #expect(try run(["get", "act", "test"]).stdoutText == "x")
  }

  @Test(arguments: Provider.all)
  func aLockedCollectionIsAServiceErrorUntilUnlocked(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["set", "locked", "a"], input: "x")
      #expect(try secretctl(instance, ["lock"]).status == 0)
      #expect(try secretctl(instance, ["status"]).stdoutText.contains("locked, 1 item, default"))
      let get = try secretctl(instance, ["get", "locked", "a"])
      #expect(get.status == 3)
      #expect(get.stderrIsOneMessage)
      #expect(get.stderrText.contains("secretctl unlock"))
      #expect(get.stdout.isEmpty)

      // secretd unlocks without asking; gnome-keyring must prompt, which fails without a desktop.
      let unlock = try secretctl(instance, ["unlock"])
      if provider == .secretd {
        #expect(unlock.status == 0)
        #expect(try secretctl(instance, ["get", "locked", "a"]).stdoutText == "x")
      } else {
        #expect(unlock.status == 3)
        #expect(unlock.stderrIsOneMessage)
        #expect(unlock.stderrText.contains("prompt"))
      }
    }
  }

  @Test(arguments: Provider.all)
  func aCollectionThatDoesNotExistIsNotFound(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let lock = try secretctl(instance, ["lock", "no-such-alias"])
      #expect(lock.status == 1)
      #expect(lock.stderrIsOneMessage)
    }
  }

  @Test func withoutAProviderEveryCommandSaysHowToStartSecretd() throws {
    // A private bus from the harness, with no provider on it.
    let bus = try PrivateBus()
    defer { bus.stop() }
    let environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin", "HOME": bus.directory.path]
    for arguments in [["status"], ["get", "s", "a"], ["search"], ["lock"], ["delete", "s", "a"]] {
      let run = try runProcess(try secretctlPath(), arguments, environment: environment, in: bus.directory)
      #expect(run.status == 3, "\(arguments)")
      #expect(run.stderrIsOneMessage)
      #expect(run.stderrText.contains("`secretctl setup`"), "\(run.stderrText)")
    }
    let set = try runProcess(
      try secretctlPath(), ["set", "s", "a"], input: Array("x".utf8), environment: environment, in: bus.directory)
    #expect(set.status == 3)
  }

  @Test func withoutABusTheMessageSaysHowToGetOne() throws {
    let run = try runProcess(
      try secretctlPath(), ["status"],
      environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "PATH": "/usr/bin:/bin"],
      in: URL(filePath: "/tmp"))
    #expect(run.status == 3)
    #expect(run.stderrIsOneMessage)
    #expect(run.stderrText.contains("`eval \"$(secretd --agent)\"`"), "\(run.stderrText)")
  }
}
