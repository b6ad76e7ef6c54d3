// python `secretstorage`'s own test suite, from its sdist as published on PyPI, run unchanged
// against secretd on a private bus.
//
// The suite picks its bus from DBUS_SESSION_BUS_ADDRESS (jeepney's `open_dbus_connection('SESSION')`)
// and talks to `org.freedesktop.secrets` unless tests/run_tests.py is given a mock service, in
// which case it also runs the mock-only classes; against a real provider those skip themselves.
// It opens a `dh-ietf1024-sha256-aes128-cbc-pkcs7` session (cryptography) for every secret.
import Foundation
import SecretTestSupport
import Testing

@Suite("python secretstorage's test suite")
struct SecretStorageSuiteTests {
  /// The release scripts/bootstrap downloads; the expected counts below are this release's.
  static let version = "3.5.0"
  static let expectedRun = 27
  /// MockCollectionTest (5) and LockingUnlockingTest (1) need upstream's mock service.
  static let expectedMockOnlySkips = 6
  /// Debian's interpreter, which sees python3-jeepney and python3-cryptography.
  static let python = "/usr/bin/python3"

  /// `.build/pypi/secretstorage-VERSION.tar.gz` in the package, or `$SECRETSTORAGE_SDIST`.
  static var sdist: URL {
    if let given = ProcessInfo.processInfo.environment["SECRETSTORAGE_SDIST"] { return URL(filePath: given) }
    let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    return packageRoot.appending(path: ".build/pypi/secretstorage-\(version).tar.gz")
  }

  @Test("tests/run_tests.py passes against secretd: nothing fails, only mock-only tests skip")
  func upstreamSuite() async throws {
    let sdist = Self.sdist
    try #require(
      FileManager.default.fileExists(atPath: sdist.path),
      "secretstorage's sdist is missing at \(sdist.path): run scripts/bootstrap (it downloads it with pip)")
    try await withProvider(.secretd) { (instance) async throws in
      let imports = try instance.run(Self.python, ["-c", "import jeepney, cryptography"])
      try #require(
        imports.status == 0,
        "\(Self.python) cannot import jeepney and cryptography: run scripts/bootstrap (Debian packages python3-jeepney, python3-cryptography): \(imports.stderrText)"
      )
      let unpacked = try instance.run("tar", ["-xzf", sdist.path, "-C", instance.bus.directory.path])
      try #require(unpacked.status == 0, "cannot unpack \(sdist.path): \(unpacked.stderrText)")
      let script = instance.bus.directory.appending(path: "secretstorage-\(Self.version)/tests/run_tests.py").path
      // `timeout` bounds a hung call (the suite has no timeouts of its own).
      let run = try await onOwnThread { try instance.run("timeout", ["300", Self.python, script]) }
      let report = SuiteReport(run.stdoutText + run.stderrText)
      let transcript = "secretstorage suite (exit \(run.status)):\n\(run.stderrText)"
      #expect(run.status == 0, "\(transcript)")
      #expect(report.ran == Self.expectedRun, "\(transcript)")
      #expect(report.failed.isEmpty, "failed: \(report.failed)\n\(transcript)")
      #expect(report.skipped.count == Self.expectedMockOnlySkips, "skipped: \(report.skipped)\n\(transcript)")
      #expect(
        report.skipped.allSatisfy { $0.reason.contains("mock") }, "a test skipped for another reason: \(report.skipped)"
      )
      #expect(report.passed == Self.expectedRun - Self.expectedMockOnlySkips, "\(transcript)")
      #expect(report.summary == "OK (skipped=\(Self.expectedMockOnlySkips))", "\(transcript)")
    }
  }

  @Test("the report parser reads unittest's verbose output")
  func parser() {
    let report = SuiteReport(
      """
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
  }
}

/// What `unittest.TextTestRunner(verbosity=2)` printed, line by line.
struct SuiteReport {
  var ran: Int?
  var passed = 0
  var skipped: [(test: String, reason: String)] = []
  var failed: [String] = []
  var summary: String?

  init(_ output: String) {
    for line in output.split(separator: "\n").map(String.init) {
      if line.hasPrefix("Ran "), let count = Int(line.split(separator: " ")[1]) {
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
