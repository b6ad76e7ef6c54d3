import Foundation
import SecretClient
import SecretTestSupport
import Testing

@Suite("credential: the secrets systemd units load from secretd")
struct CredentialCommandTests {
  @Test(
    "credential set stores items as the contract says: credential and unit attributes, label, text/plain, default collection",
    arguments: Provider.all)
  func setStoresItemsAsTheContractSays(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      #expect(try secretctl(instance, ["credential", "set", "api-token"], input: "shared").status == 0)
      #expect(
        try secretctl(instance, ["credential", "set", "--unit", "app.service", "api-token"], input: "app's").status == 0
      )
      let client = instance.client()
      let defaultPath = try await client.path(of: .default)
      let items = try await client.search(["credential": "api-token"], includeSecrets: true)
      #expect(items.count == 2)
      for item in items {
        #expect(item.collectionPath == defaultPath)
        #expect(item.secret?.contentType == "text/plain")
        if let unit = item.attributes["unit"] {
          #expect(unit == "app.service")
          #expect(item.label == "systemd credential api-token for app.service")
          #expect(item.secret?.text == "app's")
        } else {
          #expect(item.label == "systemd credential api-token")
          #expect(item.secret?.text == "shared")
        }
        let own = item.attributes.filter { !$0.key.hasPrefix("xdg:") }
        #expect(own == ["credential": "api-token"] || own == ["credential": "api-token", "unit": "app.service"])
      }
      // Setting the shared one again replaces it, and never the unit's own.
      #expect(try secretctl(instance, ["credential", "set", "api-token"], input: "shared 2").status == 0)
      #expect(try secretctl(instance, ["credential", "get", "api-token"]).stdoutText == "shared 2")
      #expect(
        try secretctl(instance, ["credential", "get", "--unit", "app.service", "api-token"]).stdoutText == "app's")
      let empty = try secretctl(instance, ["credential", "set", "api-token"], input: "")
      #expect(empty.status == 2 && empty.stderrText.contains("nothing on stdin"))
    }
  }

  @Test(
    "credential get gives what secretd gives a unit: its own credential, else the shared one", arguments: Provider.all)
  func getResolvesAsSecretdDoes(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["credential", "set", "--unit", "app.service", "only-app"], input: "mine")
      _ = try secretctl(instance, ["credential", "set", "db"], input: "shared db")
      #expect(try secretctl(instance, ["credential", "get", "--unit", "app.service", "only-app"]).stdoutText == "mine")
      #expect(try secretctl(instance, ["credential", "get", "--unit", "app.service", "db"]).stdoutText == "shared db")
      let otherUnit = try secretctl(instance, ["credential", "get", "--unit", "other.service", "only-app"])
      #expect(otherUnit.status == 1 && otherUnit.stdout.isEmpty && otherUnit.stderrIsOneMessage)
      #expect(otherUnit.stderrText.contains("secretctl credential set --unit other.service only-app"))
      #expect(try secretctl(instance, ["credential", "get", "only-app"]).status == 1, "no shared one")
    }
  }

  @Test(arguments: Provider.all)
  func listShowsUnitIDAndLabelButNoSecret(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["credential", "set", "--unit", "app.service", "api-token"], input: "s3cret-one")
      _ = try secretctl(instance, ["credential", "set", "api-token"], input: "s3cret-two")
      _ = try secretctl(instance, ["set", "not-a-credential"], input: "s3cret-three")
      let list = try secretctl(instance, ["credential", "list"])
      #expect(list.status == 0)
      let lines = list.stdoutText.split(separator: "\n").map {
        $0.split(separator: " ", omittingEmptySubsequences: true)
      }
      #expect(lines.first == ["UNIT", "ID", "LABEL"])
      #expect(lines.dropFirst().map { Array($0.prefix(2)) } == [["*", "api-token"], ["app.service", "api-token"]])
      #expect(!list.stdoutText.contains("s3cret") && !list.stdoutText.contains("not-a-credential"))
      let json = try secretctl(instance, ["credential", "list", "--json"])
      let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
      #expect(entries.map { $0["unit"] as? String } == [nil, "app.service"])
      #expect(entries.allSatisfy { $0["id"] as? String == "api-token" && ($0["label"] as? String)?.isEmpty == false })
      #expect(!json.stdoutText.contains("s3cret"))
    }
  }

  @Test(arguments: Provider.all)
  func deleteRemovesTheOneNamedAndNeverTheOther(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try secretctl(instance, ["credential", "set", "--unit", "app.service", "tok"], input: "app's")
      _ = try secretctl(instance, ["credential", "set", "tok"], input: "shared")
      #expect(try secretctl(instance, ["credential", "delete", "tok"]).status == 0)
      #expect(try secretctl(instance, ["credential", "get", "--unit", "app.service", "tok"]).stdoutText == "app's")
      let again = try secretctl(instance, ["credential", "delete", "tok"])
      #expect(again.status == 1 && again.stderrText.contains("unit \"app.service\""), "\(again.stderrText)")
      #expect(try secretctl(instance, ["credential", "delete", "--unit", "app.service", "tok"]).status == 0)
      #expect(try await instance.client().search(["credential": "tok"]).isEmpty)
    }
  }

  @Test func dropInLoadsEachCredentialFromSecretdsSocketAfterIt() throws {
    let dropIn = try runProcess(
      try secretctlPath(), ["credential", "drop-in", "app.service", "api-token", "db"],
      environment: ["PATH": "/usr/bin:/bin"], in: URL(filePath: "/tmp"))
    #expect(dropIn.status == 0)
    let lines = dropIn.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }
    #expect(
      lines == [
        "[Unit]", "Wants=secretd-credentials.socket", "After=secretd-credentials.socket", "[Service]",
        "LoadCredential=api-token:%t/secretd/credentials", "ExecStartPre=/usr/bin/test -s %d/api-token",
        "LoadCredential=db:%t/secretd/credentials", "ExecStartPre=/usr/bin/test -s %d/db",
      ])
    #expect(dropIn.stdoutText.hasPrefix("# ~/.config/systemd/user/app.service.d/"))
    // systemd itself reads it and finds nothing to complain about.
    let folder = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data("[Service]\nExecStart=/bin/true\n".utf8).write(to: folder.appending(path: "app.service"))
    let dropIns = folder.appending(path: "app.service.d")
    try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
    func verify() throws -> String {
      try runProcess(
        "systemd-analyze", ["verify", "--man=no", folder.appending(path: "app.service").path],
        environment: ["PATH": "/usr/bin:/bin", "SYSTEMD_LOG_LEVEL": "warning"], in: folder
      ).stderrText
    }
    try Data(dropIn.stdout).write(to: dropIns.appending(path: "secretd-credentials.conf"))
    #expect(try verify() == "")
    // Positive control: a credential line systemd would ignore is reported.
    try Data("[Service]\nLoadCredential=a/b:%t/secretd/credentials\n".utf8).write(
      to: dropIns.appending(path: "bad.conf"))
    #expect(try verify().contains("not valid"))
  }

  @Test(arguments: [
    ["credential", "set", "a/b"], ["credential", "set", "a:b"], ["credential", "set", ".."], ["credential", "get", ""],
    ["credential", "set", "--unit", "app", "id"], ["credential", "drop-in", "app.service", "a:b"],
    ["credential", "drop-in", "app service", "id"],
  ])
  func namesSystemdWouldNotAcceptAreUsageErrors(arguments: [String]) throws {
    let run = try runProcess(
      try secretctlPath(), arguments, input: Array("x".utf8), environment: ["PATH": "/usr/bin:/bin"],
      in: URL(filePath: "/tmp"))
    #expect(run.status == 2 && run.stderrIsOneMessage, "\(arguments): \(run.stderrText)")
  }
}
