// The Debian packages `make deb` builds (.build/deb), read with Debian's own tools, and installed
// on a fresh Debian 12 machine with a real systemd (scripts/check-deb-in-container).
import Foundation
import SecretTestSupport
import TestGates
import Testing

@Suite("Debian packages (make deb)")
struct DebianPackageTests {
  static let folder = packageRoot.appending(path: ".build/deb")

  /// The newest `.deb` of `package` in .build/deb.
  static func deb(_ package: String) throws -> URL {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    let name = try #require(
      names.filter { $0.hasPrefix("\(package)_") && $0.hasSuffix(".deb") }.sorted().last,
      "no \(package) package in \(folder.path): `make test` builds it first (`make deb`)")
    return folder.appending(path: name)
  }

  static func field(_ name: String, of deb: URL) throws -> String {
    let output = try runProcess(
      "dpkg-deb", ["--field", deb.path, name], environment: environmentWithoutBus, in: folder)
    try #require(output.status == 0, "\(output.stderrText)")
    return output.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// `libc6 (>= 2.36), libsecret-1-0 (>= 0.7)` → ["libc6", "libsecret-1-0"].
  static func packageNames(_ depends: String) -> [String] {
    depends.split(separator: ",").map { $0.split(separator: " ").first.map(String.init) ?? "" }
  }

  @Test("swift-secrets depends only on Debian's libsecret, GLib, libgcrypt and tpm2-tss (and the C library)")
  func theMainPackageDependsOnlyOnLibsecretGLibLibgcryptAndTPM2TSS() throws {
    let depends = Self.packageNames(try Self.field("Depends", of: try Self.deb("swift-secrets")))
    let tpm2 = ["libtss2-esys-3.0.2-0", "libtss2-mu0", "libtss2-rc0", "libtss2-tctildr0"]
    #expect(Set(depends) == Set(["libc6", "libsecret-1-0", "libglib2.0-0", "libgcrypt20"] + tpm2), "\(depends)")
  }

  @Test("swift-secrets-openbao adds only glib-networking (GIO's TLS, for https) to swift-secrets of the same version")
  func theOpenBaoPackageAddsOnlyGIOsTLSBackend() throws {
    let deb = try Self.deb("swift-secrets-openbao")
    let depends = try Self.field("Depends", of: deb)
    let version = try Self.field("Version", of: deb)
    #expect(depends.hasPrefix("swift-secrets (= \(version)), "), "\(depends)")
    #expect(
      Set(Self.packageNames(depends))
        == ["swift-secrets", "glib-networking", "libc6", "libsecret-1-0", "libglib2.0-0", "libgcrypt20"], "\(depends)")
  }

  @Test("lintian finds nothing to warn about in either package")
  func lintianIsQuiet() async throws {
    let debs = [try Self.deb("swift-secrets").path, try Self.deb("swift-secrets-openbao").path]
    let lintian = try await runProcessOnOwnThread(
      "lintian", ["--display-info"] + debs, environment: environmentWithoutBus, in: Self.folder)
    let lines = lintian.stdoutText.split(separator: "\n")
    #expect(lintian.status == 0, "\(lintian.stdoutText)\(lintian.stderrText)")
    #expect(lines.filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }.isEmpty, "\(lintian.stdoutText)")
    // Positive control: lintian read both packages (it has remarks at the info level).
    #expect(lines.contains { $0.hasPrefix("I: swift-secrets: ") }, "\(lintian.stdoutText)")
    #expect(lines.contains { $0.hasPrefix("I: swift-secrets-openbao: ") }, "\(lintian.stdoutText)")
  }

  @Test("the packaged binaries are stripped and carry the Swift runtime inside (no libswift to load)")
  func binariesAreStrippedAndStatic() async throws {
    let unpacked = FileManager.default.temporaryDirectory.appending(path: "deb-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: unpacked) }
    for (package, binaries) in [
      ("swift-secrets", ["secretd", "secretctl"]), ("swift-secrets-openbao", ["secretctl-bao"]),
    ] {
      let extracted = try await runProcessOnOwnThread(
        "dpkg-deb", ["-x", try Self.deb(package).path, unpacked.path], environment: environmentWithoutBus,
        in: Self.folder)
      try #require(extracted.status == 0, "\(extracted.stderrText)")
      for binary in binaries {
        let path = unpacked.appending(path: "usr/bin/\(binary)").path
        let sections = try runProcess("readelf", ["-S", "-W", path], environment: environmentWithoutBus, in: unpacked)
        #expect(sections.status == 0)
        #expect(sections.stdoutText.contains(".text"), "readelf read \(binary)")
        #expect(
          !sections.stdoutText.contains(".symtab") && !sections.stdoutText.contains(".debug_"),
          "\(binary) is not stripped")
        let dynamic = try runProcess("readelf", ["-d", "-W", path], environment: environmentWithoutBus, in: unpacked)
        #expect(dynamic.stdoutText.contains("(NEEDED)"), "readelf read \(binary)'s dynamic section")
        #expect(!dynamic.stdoutText.contains("libswift"), "\(binary) loads Swift's runtime:\n\(dynamic.stdoutText)")
        #expect(
          !dynamic.stdoutText.contains("RUNPATH") && !dynamic.stdoutText.contains("RPATH"),
          "\(binary) has a search path")
      }
    }
  }

  @Test("make deb packages on a machine where git has no identity, and names the project as maintainer")
  func packagingNeedsNoGitIdentity() async throws {
    let scratch = FileManager.default.temporaryDirectory.appending(path: "deb-identity-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    var environment = environmentWithoutBus
    environment["HOME"] = scratch.path
    environment["GIT_CONFIG_NOSYSTEM"] = "1"
    environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
    environment["DEB_MAINTAINER"] = nil
    let noIdentity = try runProcess(
      "git", ["-C", packageRoot.path, "config", "user.name"], environment: environment, in: scratch)
    #expect(noIdentity.status != 0, "git still has an identity here, so this test would prove nothing")
    let packaged = try await runProcessOnOwnThread(
      packageRoot.appending(path: "scripts/package-deb").path,
      [packageRoot.appending(path: ".build/release").path, scratch.appending(path: "deb").path],
      environment: environment, in: scratch)
    try #require(packaged.status == 0, "\(packaged.stdoutText)\(packaged.stderrText)")
    let names = try FileManager.default.contentsOfDirectory(atPath: scratch.appending(path: "deb").path)
    let deb = try #require(names.first { $0.hasPrefix("swift-secrets_") && $0.hasSuffix(".deb") }, "\(names)")
    let maintainer = try Self.field("Maintainer", of: scratch.appending(path: "deb/\(deb)"))
    #expect(maintainer.hasPrefix("swift-secrets maintainers <"), "\(maintainer)")
  }

  @Test(
    "on a fresh Debian 12 machine the packages install, man pages and completions work, and the README's first steps reach secretd after secretctl setup",
    .needsRoot("installing a package in a booted container needs root"))
  func onAFreshDebianMachine() async throws {
    let check = try await ContainerCheck.run(
      packageRoot.appending(path: "scripts/check-deb-in-container"),
      [try Self.deb("swift-secrets").path, try Self.deb("swift-secrets-openbao").path])
    guard let (status, transcript) = try check.transcript() else { return }
    #expect(status == 0, "\(transcript)")
    #expect(!transcript.contains("FAIL"), "\(transcript)")
    #expect(transcript.contains(" passed, 0 failed"), "\(transcript)")
    #expect(transcript.contains("ok   secretctl get reads it back"), "\(transcript)")
  }
}
