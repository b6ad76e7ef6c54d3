// `secretctl unlocker add|list|remove` against secretd --persistent on a private bus: unlockers
// come and go without touching the items, the last one stays, and a TPM that does not answer
// adds nothing.
import Foundation
import SecretTestSupport
import Testing

@Suite("unlocker: the ways into secretd's persistent collection")
struct UnlockerCommandTests {
  static func unlock(_ instance: ProviderInstance, _ passphrase: String) throws -> Int32 {
    try secretctl(instance, ["unlock", "--password-stdin"], input: passphrase).status
  }

  static func keyFile(_ instance: ProviderInstance) throws -> Data {
    try Data(contentsOf: instance.bus.directory.appending(path: "data/secretd/login.key"))
  }

  @Test("a passphrase added opens login, the one removed no longer does, and the items stay as they were")
  func addListRemove() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      #expect(try Self.unlock(instance, "first") == 0)
      #expect(try secretctl(instance, ["set", "kept", "a"], input: "value").status == 0)
      let log = try Data(contentsOf: instance.bus.directory.appending(path: "data/secretd/login.log"))

      let added = try secretctl(instance, ["unlocker", "add", "passphrase", "--password-stdin"], input: "second\n")
      #expect(added.status == 0, "\(added.stderrText)")
      #expect(added.stdoutText == "unlocker 2 added\n")
      #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "1  passphrase\n2  passphrase\n")
      let json = try secretctl(instance, ["unlocker", "list", "--json"]).stdoutText
      #expect(json.contains("\"number\": 2") && json.contains("\"kind\": \"passphrase\""), "\(json)")

      let removed = try secretctl(instance, ["unlocker", "remove", "1"])
      #expect(removed.status == 0, "\(removed.stderrText)")
      #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "2  passphrase\n")
      #expect(try secretctl(instance, ["unlocker", "remove", "1"]).status == 1)

      #expect(try secretctl(instance, ["lock"]).status == 0)
      #expect(try Self.unlock(instance, "first") != 0)
      #expect(try Self.unlock(instance, "second") == 0)
      #expect(try secretctl(instance, ["get", "kept", "a"]).stdoutText == "value")
      let after = try Data(contentsOf: instance.bus.directory.appending(path: "data/secretd/login.log"))
      #expect(after == log, "the records were written again")
    }
  }

  @Test("removing the last unlocker is refused with status 3, and the key file stays as it was")
  func lastUnlockerStays() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      #expect(try Self.unlock(instance, "only") == 0)
      // A second one can go (the control), the last cannot.
      _ = try secretctl(instance, ["unlocker", "add", "passphrase", "--password-stdin"], input: "other")
      #expect(try secretctl(instance, ["unlocker", "remove", "2"]).status == 0)
      let before = try Self.keyFile(instance)
      let refused = try secretctl(instance, ["unlocker", "remove", "1"])
      #expect(refused.status == 3)
      #expect(refused.stderrText.contains("the last unlocker"), "\(refused.stderrText)")
      #expect(refused.stderrIsOneMessage)
      #expect(try Self.keyFile(instance) == before)
      #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "1  passphrase\n")
    }
  }

  @Test("while login is locked, unlockers are listed but not added or removed, and the error says to unlock")
  func lockedLoginRefusesChanges() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      #expect(try Self.unlock(instance, "first") == 0)
      _ = try secretctl(instance, ["unlocker", "add", "passphrase", "--password-stdin"], input: "second")
      #expect(try secretctl(instance, ["lock"]).status == 0)
      let add = try secretctl(instance, ["unlocker", "add", "passphrase", "--password-stdin"], input: "third")
      #expect(add.status == 3)
      #expect(add.stderrText.contains("run `secretctl unlock` first"), "\(add.stderrText)")
      let remove = try secretctl(instance, ["unlocker", "remove", "1"])
      #expect(remove.status == 3)
      #expect(remove.stderrText.contains("run `secretctl unlock` first"), "\(remove.stderrText)")
      #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "1  passphrase\n2  passphrase\n")
    }
  }

  @Test("adding a TPM unlocker with no TPM answering fails with status 3, naming the TCTI, and adds nothing")
  func unreachableTPM() async throws {
    let tcti = "swtpm:path=/nonexistent/secretd-test-tpm.sock"
    try await withProvider(.secretd, arguments: ["--persistent", "--tcti", tcti]) { instance in
      #expect(try Self.unlock(instance, "first") == 0)
      let before = try Self.keyFile(instance)
      let add = try secretctl(instance, ["unlocker", "add", "tpm"])
      #expect(add.status == 3)
      #expect(add.stderrText.contains("no TPM answered through the TCTI '\(tcti)'"), "\(add.stderrText)")
      #expect(add.stderrText.contains("no unlocker was added"), "\(add.stderrText)")
      #expect(add.stderrIsOneMessage)
      #expect(try Self.keyFile(instance) == before)
    }
  }

  @Test("a TPM unlocker added through secretctl is listed as tpm")
  func tpmUnlockerListed() async throws {
    try await withSoftwareTPM { tpm, _ in
      try await withProvider(.secretd, arguments: ["--persistent", "--tcti", tpm.tcti]) { instance in
        #expect(try Self.unlock(instance, "first") == 0)
        let add = try secretctl(instance, ["unlocker", "add", "tpm"])
        #expect(add.status == 0, "\(add.stderrText)")
        #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "1  passphrase\n2  tpm\n")
      }
    }
  }

  @Test("a provider that is not secretd is said to have no unlockers, with status 3")
  func notSecretd() async throws {
    try await withProvider(.gnomeKeyring) { instance in
      let list = try secretctl(instance, ["unlocker", "list"])
      #expect(list.status == 3)
      #expect(list.stderrText.contains("a provider other than secretd"), "\(list.stderrText)")
      #expect(list.stderrIsOneMessage)
    }
  }

  @Test("unlocker add takes passphrase, login or tpm, and no passphrase for tpm")
  func usage() async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { instance in
      #expect(try Self.unlock(instance, "first") == 0)
      let unknown = try secretctl(instance, ["unlocker", "add", "fingerprint"])
      #expect(unknown.status == 2 && unknown.stderrText.contains("passphrase, login or tpm"), "\(unknown.stderrText)")
      let tpmWithPassphrase = try secretctl(instance, ["unlocker", "add", "tpm", "--password-stdin"], input: "x")
      #expect(tpmWithPassphrase.status == 2, "\(tpmWithPassphrase.stderrText)")
      #expect(try secretctl(instance, ["unlocker", "remove", "two"]).status == 2)
      #expect(try secretctl(instance, ["unlocker", "list"]).stdoutText == "1  passphrase\n")
    }
  }
}
