// secretd --persistent --tcti with swtpm as the machine's TPM: once login has a TPM unlocker,
// secretd unlocks it as it starts, with nobody typing, so its items and the credentials units
// load from it are there at once; when the TPM fails, login stays locked, the log says why and
// how to unlock, and no file changes.
import Foundation
import SecretTestSupport
import Testing

@Suite("the persistent collection unlocked by the TPM at start")
struct PersistentTPMTests {
  typealias Persistent = PersistentCollectionTests

  static func log(_ instance: ProviderInstance) -> String {
    (try? String(contentsOf: instance.bus.directory.appending(path: "secretd.log"), encoding: .utf8)) ?? ""
  }

  static func secretctl(_ instance: ProviderInstance, _ arguments: [String]) throws -> ProcessOutput {
    try instance.run(try builtExecutable("secretctl").path, arguments)
  }

  @Test("with a TPM unlocker, login comes back unlocked with its items after a restart, nobody typing")
  func unlockedAtStart() async throws {
    try await withSoftwareTPM { tpm, _ in
      try await withProvider(.secretd, arguments: ["--persistent", "--tcti", tpm.tcti]) { instance in
        #expect(try Persistent.unlock(instance, "passphrase").status == 0)
        let stored = try instance.secretTool(["store", "--label=kept", "service", "tpm", "account", "a"], input: "v")
        #expect(stored.status == 0, "\(stored.stderrText)")
        // Without a TPM unlocker, a restart leaves login locked.
        instance.stopProvider()
        try instance.startProvider()
        #expect(try Persistent.isLocked(instance))
        #expect(try Persistent.unlock(instance, "passphrase").status == 0)

        let added = try Self.secretctl(instance, ["unlocker", "add", "tpm"])
        #expect(added.status == 0, "\(added.stderrText)")
        #expect(added.stdoutText == "unlocker 2 added\n")
        instance.stopProvider()
        try instance.startProvider()

        #expect(try !Persistent.isLocked(instance))
        #expect(try instance.secretTool(["lookup", "service", "tpm", "account", "a"]).stdoutText == "v")
        #expect(Self.log(instance).contains("the TPM unlocked it (unlocker 2) with nobody typing: 1 item"))
      }
    }
  }

  @Test("a unit gets a credential kept in login right after a restart the TPM unlocks, and none once the TPM is gone")
  func credentialAtStart() async throws {
    try await withSoftwareTPM { tpm, _ in
      try await withProvider(.secretd, arguments: ["--persistent", "--tcti", tpm.tcti]) { instance in
        #expect(try Persistent.unlock(instance, "passphrase").status == 0)
        let set = try instance.run(
          try builtExecutable("secretctl").path, ["credential", "set", "api-token"], input: Array("token".utf8))
        #expect(set.status == 0, "\(set.stderrText)")
        #expect(try Self.secretctl(instance, ["unlocker", "add", "tpm"]).status == 0)
        let app = try CredentialAsker(instance, group: "\(CredentialAsker.slice())/app.service")
        defer { app.remove() }

        instance.stopProvider()
        try instance.startProvider()
        #expect(try app.ask(for: "app.service", "api-token") == Array("token".utf8))

        instance.stopProvider()
        tpm.stop()
        try instance.startProvider()
        #expect(try app.ask(for: "app.service", "api-token").isEmpty)
        #expect(Self.log(instance).contains("holding it is locked; unlock it (`secretctl unlock`)"))
      }
    }
  }

  @Test("when the TPM does not answer at start, login stays locked, the log says why and how, and no file changes")
  func lockedWhenTheTPMFails() async throws {
    try await withSoftwareTPM { tpm, _ in
      try await withProvider(.secretd, arguments: ["--persistent", "--tcti", tpm.tcti]) { instance in
        #expect(try Persistent.unlock(instance, "passphrase").status == 0)
        _ = try instance.secretTool(["store", "--label=kept", "service", "tpm", "account", "b"], input: "w")
        #expect(try Self.secretctl(instance, ["unlocker", "add", "tpm"]).status == 0)
        instance.stopProvider()
        let files = try Persistent.dataFiles(instance)
        tpm.stop()
        try instance.startProvider()

        #expect(try Persistent.isLocked(instance))
        let log = Self.log(instance)
        #expect(log.contains("the TPM did not unlock it, so it stays locked (the TPM did not open"), "\(log)")
        #expect(log.contains("no TPM answered through the TCTI '\(tpm.tcti)'"), "\(log)")
        #expect(log.contains("`secretctl unlock` opens it with its passphrase"), "\(log)")
        #expect(try Persistent.dataFiles(instance) == files)
        #expect(try Persistent.unlock(instance, "passphrase").status == 0)
        #expect(try instance.secretTool(["lookup", "service", "tpm", "account", "b"]).stdoutText == "w")
      }
    }
  }
}
