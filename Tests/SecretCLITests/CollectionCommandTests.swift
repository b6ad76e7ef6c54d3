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
      #expect(run.stderrText.contains("`secretd &`"))
      #expect(run.stderrText.contains("`systemctl --user enable --now secretd`"))
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
    #expect(run.stderrText.contains("dbus-run-session"))
  }
}
