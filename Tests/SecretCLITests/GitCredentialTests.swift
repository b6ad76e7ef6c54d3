import Foundation
import SecretClient
import SecretTestSupport
import Testing

@Suite("git-credential with real git")
struct GitCredentialTests {
  /// git's own helper, built by scripts/bootstrap from the source Debian ships with git.
  static let libsecretHelper = URL(filePath: #filePath).deletingLastPathComponent()
    .appending(path: "../../.build/git-credential-libsecret").standardized.path

  /// `git -c credential.helper=… credential ACTION`, as git runs helpers for a push or fetch;
  /// the helper is secretctl's unless another helper command is given.
  func git(_ instance: ProviderInstance, _ action: String, _ input: String, helper: String? = nil) throws
    -> ProcessOutput
  {
    try instance.run(
      "git",
      [
        "-c", "credential.helper=", "-c", "credential.helper=\(try helper ?? "!'\(secretctlPath())' git-credential")",
        "-c", "credential.interactive=false", "credential", action,
      ],
      input: Array(input.utf8))
  }

  @Test(arguments: Provider.all)
  func approveFillRejectRoundTrip(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let approve = try git(
        instance, "approve",
        "protocol=https\nhost=example.com:8080\npath=team/repo.git\nusername=bob\npassword=s3cr=t\n\n")
      #expect(approve.status == 0, "\(approve.stderrText)")

      // Stored as git's libsecret helper stores it.
      let item = try #require(try await instance.client().search(["server": "example.com"]).first)
      // git passes no path for https unless credential.useHttpPath is set, so there is no object.
      #expect(
        item.attributes == [
          "xdg:schema": "org.gnome.keyring.NetworkPassword", "user": "bob", "protocol": "https",
          "server": "example.com", "port": "8080",
        ])
      #expect(item.label.hasPrefix("Git: https://example.com:8080/"))

      let fill = try git(instance, "fill", "protocol=https\nhost=example.com:8080\npath=team/repo.git\n\n")
      #expect(fill.status == 0, "\(fill.stderrText)")
      #expect(fill.stdoutText.contains("username=bob\n"))
      #expect(fill.stdoutText.contains("password=s3cr=t\n"))

      let reject = try git(
        instance, "reject",
        "protocol=https\nhost=example.com:8080\npath=team/repo.git\nusername=bob\npassword=s3cr=t\n\n")
      #expect(reject.status == 0)
      #expect(try await instance.client().search(["server": "example.com"]).isEmpty)
    }
  }

  @Test(arguments: Provider.all)
  func getWithNothingStoredPrintsNothingAndSucceeds(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let get = try secretctl(instance, ["git-credential", "get"], input: "protocol=https\nhost=nothing.example\n\n")
      #expect(get.status == 0)
      #expect(get.stdout.isEmpty && get.stderr.isEmpty)
      let unknown = try secretctl(instance, ["git-credential", "capability"], input: "\n")
      #expect(unknown.status == 0 && unknown.stdout.isEmpty)
    }
  }

  @Test(arguments: Provider.all)
  func itemsOfEitherOfGitsSchemasAreFoundAndAnotherProgramsAreNot(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      // What git-credential-libsecret 2.43 and later stores (schema org.git.Password, port as text).
      try await instance.client().write(
        SecretValue("from-libsecret\npassword_expiry_utc=1999999999"),
        attributes: [
          "xdg:schema": "org.git.Password", "user": "carol", "protocol": "https", "server": "git.example",
          "port": "2222",
        ],
        label: "Git: https://git.example:2222/")
      // What older versions (and secretctl) store.
      try await instance.client().write(
        SecretValue("older"),
        attributes: [
          "xdg:schema": "org.gnome.keyring.NetworkPassword", "user": "dave", "protocol": "ssh",
          "server": "other.example",
        ])
      // Another program's item that happens to carry the same attributes.
      try await instance.client().write(
        SecretValue("not git's"),
        attributes: [
          "xdg:schema": "org.freedesktop.Secret.Generic", "user": "erin", "protocol": "ssh", "server": "other.example",
        ])

      let get = try secretctl(
        instance, ["git-credential", "get"], input: "protocol=https\nhost=git.example:2222\nwwwauth[]=Basic\n")
      #expect(get.stdoutText == "username=carol\npassword=from-libsecret\npassword_expiry_utc=1999999999\n")
      let other = try secretctl(instance, ["git-credential", "get"], input: "protocol=ssh\nhost=other.example\n\n")
      #expect(other.stdoutText == "username=dave\npassword=older\n")
      let erase = try secretctl(instance, ["git-credential", "erase"], input: "protocol=ssh\nhost=other.example\n\n")
      #expect(erase.status == 0)
      let left = try await instance.client().search(["server": "other.example"])
      #expect(left.map { $0.attributes["user"] } == ["erin"], "git's item erased, the other program's kept")
      let notGiven = try secretctl(instance, ["git-credential", "get"], input: "protocol=ssh\nhost=other.example\n\n")
      #expect(notGiven.status == 0 && notGiven.stdout.isEmpty, "\(notGiven.stdoutText)")
      let emptyErase = try secretctl(instance, ["git-credential", "erase"], input: "\n")
      #expect(emptyErase.status == 0)
      #expect(
        try await instance.client().search(["server": "git.example"]).count == 1, "an empty pattern erases nothing")
    }
  }

  @Test(
    "rejecting a stale password erases nothing stored since; rejecting the stored one erases it, as git's helper (2.43 and later) does",
    arguments: Provider.all)
  func erasingWithAPasswordTakesOnlyTheCredentialHoldingIt(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let request = "protocol=https\nhost=fresh.example\nusername=bob\n"
      #expect(try git(instance, "approve", request + "password=fresh\n\n").status == 0)
      // Another process of git, still holding the old password, has it rejected.
      #expect(try git(instance, "reject", request + "password=stale\n\n").status == 0)
      let fill = try git(instance, "fill", "protocol=https\nhost=fresh.example\n\n")
      #expect(fill.stdoutText.contains("username=bob\npassword=fresh\n"), "\(fill.stdoutText) \(fill.stderrText)")
      // The password stored is compared with its first line only: extra fields follow it.
      try await instance.client().write(
        SecretValue("expiring\npassword_expiry_utc=1999999999"),
        attributes: [
          "xdg:schema": "org.git.Password", "user": "bob", "protocol": "https", "server": "expiring.example",
        ])
      #expect(
        try git(
          instance, "reject", "protocol=https\nhost=expiring.example\nusername=bob\npassword=expiring\n\n"
        ).status == 0)
      #expect(try await instance.client().search(["server": "expiring.example"]).isEmpty)
      // Positive control: the password it holds erases it.
      #expect(try git(instance, "reject", request + "password=fresh\n\n").status == 0)
      #expect(try await instance.client().search(["server": "fresh.example"]).isEmpty)
    }
  }

  @Test(
    "git's own libsecret helper and secretctl read each other's credentials through git, and an erase by one is seen by the other",
    arguments: Provider.all)
  func gitsOwnLibsecretHelperAgreesWithSecretctl(provider: Provider) async throws {
    let theirs = "!'\(Self.libsecretHelper)'"
    try #require(
      FileManager.default.isExecutableFile(atPath: Self.libsecretHelper), "run scripts/bootstrap to build \(theirs)")
    try await withProvider(provider) { instance in
      let ours = "protocol=https\nhost=ours.example:8443\nusername=erin\npassword=from secretctl\n\n"
      #expect(try git(instance, "approve", ours).status == 0)
      let readByTheirs = try git(instance, "fill", "protocol=https\nhost=ours.example:8443\n\n", helper: theirs)
      #expect(readByTheirs.status == 0, "\(readByTheirs.stderrText)")
      #expect(
        readByTheirs.stdoutText.contains("username=erin\npassword=from secretctl\n"), "\(readByTheirs.stdoutText)")

      let theirsStored = "protocol=https\nhost=theirs.example\nusername=frank\npassword=from libsecret\n\n"
      #expect(try git(instance, "approve", theirsStored, helper: theirs).status == 0)
      let readByOurs = try git(instance, "fill", "protocol=https\nhost=theirs.example\n\n")
      #expect(readByOurs.status == 0, "\(readByOurs.stderrText)")
      #expect(readByOurs.stdoutText.contains("username=frank\npassword=from libsecret\n"), "\(readByOurs.stdoutText)")

      #expect(try git(instance, "reject", "protocol=https\nhost=theirs.example\nusername=frank\n\n").status == 0)
      let afterErase = try instance.run(
        Self.libsecretHelper, ["get"], input: Array("protocol=https\nhost=theirs.example\n\n".utf8))
      #expect(afterErase.status == 0 && afterErase.stdout.isEmpty, "\(afterErase.stdoutText)")
    }
  }

  @Test(arguments: Provider.all)
  func aStoredValueWithALineBreakCannotAddLinesToGitsProtocol(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let request = "protocol=https\nhost=planted.example\n\n"
      // What git does when the helper has nothing for it: the result the planted item must not change.
      let baseline = try git(instance, "fill", request)
      let attributes = ["protocol": "https", "server": "planted.example", "xdg:schema": "org.git.Password"]
      try await instance.client().write(
        SecretValue("pw\r\nquit=1"), attributes: attributes.merging(["user": "eve\npassword=planted"]) { $1 },
        label: "planted")
      let planted = try git(instance, "fill", request)
      #expect(planted.status == baseline.status, "\(planted.stderrText)")
      #expect(planted.stdoutText == baseline.stdoutText)
      #expect(!planted.stdoutText.contains("planted") && !planted.stdoutText.contains("quit"))
      #expect(planted.stderrText.contains("newline, carriage return or NUL"), "\(planted.stderrText)")
      // Positive control: an item without line breaks, found the same way, is given to git.
      try await instance.client().delete(attributes)
      try await instance.client().write(
        SecretValue("clean"), attributes: attributes.merging(["user": "eve"]) { $1 }, label: "clean")
      let clean = try git(instance, "fill", request)
      #expect(clean.status == 0 && clean.stdoutText.contains("username=eve\npassword=clean\n"))
      let nul = try secretctl(
        instance, ["git-credential", "get"], input: "protocol=https\nhost=planted\u{0}.example\n\n")
      #expect(nul.status == 2 && nul.stdout.isEmpty)
    }
  }
}
