// python `secretstorage`'s own test suite, from its sdist as published on PyPI, run unchanged
// against secretd and gnome-keyring on private buses: the newest release, with its own code, and
// the suite of the release Debian packages (python3-secretstorage 3.3.3, which Debian's `keyring`
// uses) against Debian's installed module; both also against secretd --persistent, whose default
// collection is the sealed `login`.
//
// The suite picks its bus from DBUS_SESSION_BUS_ADDRESS (jeepney's `open_dbus_connection('SESSION')`)
// and talks to `org.freedesktop.secrets` unless tests/run_tests.py is given a mock service, in
// which case it also runs the mock-only classes; against a real provider those skip themselves.
// It opens a `dh-ietf1024-sha256-aes128-cbc-pkcs7` session (cryptography) for every secret.
import Foundation
import SecretTestSupport
import Testing

/// A release of python secretstorage whose suite runs, and the module it tests.
struct SecretStorageRelease: Sendable, CustomStringConvertible {
  var version: String
  /// The name of the sdist in .build/pypi (PyPI's name changed case after 3.3.3).
  var sdist: String
  /// The suite tests Debian's installed module (/usr/lib/python3/dist-packages), not the sdist's.
  var testsDebiansModule: Bool
  var expectedRun: Int

  var description: String { testsDebiansModule ? "\(version) (Debian's)" : version }

  static let newest = SecretStorageRelease(
    version: "3.5.0", sdist: "secretstorage-3.5.0", testsDebiansModule: false, expectedRun: 27)
  static let debian = SecretStorageRelease(
    version: "3.3.3", sdist: "SecretStorage-3.3.3", testsDebiansModule: true, expectedRun: 26)
  static let all = [newest, debian]
}

@Suite("python secretstorage's test suite")
struct SecretStorageSuiteTests {
  /// MockCollectionTest (5) and LockingUnlockingTest (1) need upstream's mock service.
  static let expectedMockOnlySkips = 6
  /// Debian's interpreter, which sees python3-jeepney, python3-cryptography and python3-secretstorage.
  static let python = "/usr/bin/python3"
  static let debiansModule = "/usr/lib/python3/dist-packages/secretstorage"

  /// `.build/pypi/NAME.tar.gz` in the package (scripts/bootstrap downloads them).
  static func sdist(_ release: SecretStorageRelease) -> URL {
    let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    return packageRoot.appending(path: ".build/pypi/\(release.sdist).tar.gz")
  }

  /// The same suite, the same counts, against either provider. Debian's 3.3.3 maps only GDBus's answer to an unknown object path
  /// to ItemNotFoundException: its `test_non_existing_item` passes once secretd answers as
  /// gnome-keyring does (issue 25, item 14).
  @Test(
    "tests/run_tests.py passes: nothing fails, only mock-only tests skip", arguments: Provider.all,
    SecretStorageRelease.all)
  func upstreamSuite(provider: Provider, release: SecretStorageRelease) async throws {
    try await withProvider(provider) { (instance) async throws in
      try await Self.runSuite(release, against: instance, named: "\(provider)")
    }
  }

  /// secretd's persistent collection, unlocked, as the default collection the suite uses.
  @Test(
    "tests/run_tests.py passes against secretd --persistent, whose default is the sealed login",
    arguments: SecretStorageRelease.all)
  func upstreamSuiteOnPersistentLogin(release: SecretStorageRelease) async throws {
    try await withProvider(.secretd, arguments: ["--persistent"]) { (instance) async throws in
      let unlocked = try instance.run(
        try builtExecutable("secretctl").path, ["unlock", "--password-stdin"], input: Array("login".utf8))
      try #require(unlocked.status == 0, "\(unlocked.stderrText)")
      try await Self.runSuite(release, against: instance, named: "secretd's login")
    }
  }

  private static func runSuite(
    _ release: SecretStorageRelease, against instance: ProviderInstance, named provider: String
  )
    async throws
  {
    let sdist = Self.sdist(release)
    try #require(
      FileManager.default.fileExists(atPath: sdist.path),
      "secretstorage's sdist is missing at \(sdist.path): run `make bootstrap` (it downloads it with pip)")
    let modules = release.testsDebiansModule ? "jeepney, cryptography, secretstorage" : "jeepney, cryptography"
    let imports = try instance.run(Self.python, ["-c", "import \(modules)"])
    try #require(
      imports.status == 0,
      "\(Self.python) cannot import \(modules): run `make bootstrap` (python3-jeepney, python3-cryptography, python3-secretstorage): \(imports.stderrText)"
    )
    let unpacked = try instance.run("tar", ["-xzf", sdist.path, "-C", instance.bus.directory.path])
    try #require(unpacked.status == 0, "cannot unpack \(sdist.path): \(unpacked.stderrText)")
    let folder = instance.bus.directory.appending(path: release.sdist)
    // run_tests.py puts the sdist's folder first on sys.path: without its own copy of the module,
    // the suite imports the installed one.
    if release.testsDebiansModule { try FileManager.default.removeItem(at: folder.appending(path: "secretstorage")) }
    // `timeout` bounds a hung call (the suite has no timeouts of its own).
    let run = try await onOwnThread {
      try instance.run("timeout", ["300", Self.python, folder.appending(path: "tests/run_tests.py").path])
    }
    let report = SuiteReport(run.stdoutText + run.stderrText)
    let transcript = "secretstorage \(release) suite against \(provider) (exit \(run.status)):\n\(run.stderrText)"
    let tested = release.testsDebiansModule ? Self.debiansModule : folder.appending(path: "secretstorage").path
    #expect(report.module == tested, "\(transcript)")
    #expect(run.status == 0, "\(transcript)")
    #expect(report.ran == release.expectedRun, "\(transcript)")
    #expect(report.failed.isEmpty, "failed: \(report.failed)\n\(transcript)")
    #expect(report.skipped.count == Self.expectedMockOnlySkips, "skipped: \(report.skipped)\n\(transcript)")
    #expect(
      report.skipped.allSatisfy { $0.reason.contains("mock") }, "a test skipped for another reason: \(report.skipped)"
    )
    #expect(report.passed == release.expectedRun - Self.expectedMockOnlySkips, "\(transcript)")
    #expect(report.summary == "OK (skipped=\(Self.expectedMockOnlySkips))", "\(transcript)")
  }

  @Test("the report parser reads unittest's verbose output")
  func parser() {
    let report = SuiteReport(
      """
      Running with Python 3.11.2 (SecretStorage from /usr/lib/python3/dist-packages/secretstorage)
      test_a (test_x.T.test_a) ... ok
      test_b (test_x.T.test_b) ... skipped 'This test should only be run with the mocked server.'
      test_c (test_x.T.test_c) ... FAIL
      test_d (test_x.T.test_d) ... ERROR
      ----------------------------------------------------------------------
      Ran 4 tests in 0.1s

      FAILED (failures=1, errors=1, skipped=1)
      """)
    #expect(report.ran == 4)
    #expect(report.passed == 1)
    #expect(report.skipped.map(\.test) == ["test_b (test_x.T.test_b)"])
    #expect(report.failed == ["test_c (test_x.T.test_c): FAIL", "test_d (test_x.T.test_d): ERROR"])
    #expect(report.summary == "FAILED (failures=1, errors=1, skipped=1)")
    #expect(report.module == "/usr/lib/python3/dist-packages/secretstorage")
  }
}

/// What `unittest.TextTestRunner(verbosity=2)` printed, line by line.
struct SuiteReport {
  var ran: Int?
  var passed = 0
  var skipped: [(test: String, reason: String)] = []
  var failed: [String] = []
  var summary: String?
  /// Where the tested module was imported from (run_tests.py's first line says).
  var module: String?

  init(_ output: String) {
    for line in output.split(separator: "\n").map(String.init) {
      if line.hasPrefix("Running with Python"), let from = line.range(of: "(SecretStorage from ") {
        module = String(line[from.upperBound...].dropLast())
      } else if line.hasPrefix("Ran "), let count = Int(line.split(separator: " ")[1]) {
        ran = count
      } else if line.hasPrefix("OK") || line.hasPrefix("FAILED") {
        summary = line
      } else if let range = line.range(of: " ... ") {
        let test = String(line[..<range.lowerBound])
        let outcome = String(line[range.upperBound...])
        if outcome == "ok" {
          passed += 1
        } else if outcome.hasPrefix("skipped") {
          skipped.append((test, String(outcome.dropFirst("skipped".count)).trimmingCharacters(in: .whitespaces)))
        } else {
          failed.append("\(test): \(outcome)")
        }
      }
    }
  }
}
