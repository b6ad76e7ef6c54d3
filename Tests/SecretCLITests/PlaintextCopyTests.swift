// What secretctl leaves of a secret it printed, in memory a core dump or swap could show: every
// copy it makes of a secret is in memory that is locked or wiped (SecretBytes), so none. The count
// is taken at the process's exit by a preloaded scanner (SecretTestSupport/SecretScan).
import Foundation
import SecretTestSupport
import Testing

@Suite("plaintext copies left in secretctl's memory")
struct PlaintextCopyTests {
  /// A secret no other process here holds, and its hex for the scanner.
  static let secret = "scan-" + (0..<12).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
  static let hex = secret.utf8.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()

  static func copies(left run: ProcessOutput) -> Int? {
    run.stderrText.split(separator: "\n").first { $0.hasPrefix("secret-scan: ") }.flatMap { Int($0.dropFirst(13)) }
  }

  static func scanned(_ instance: ProviderInstance, _ program: String, _ arguments: [String], input: String? = nil)
    throws -> ProcessOutput
  {
    let scanner = try compiledPreloadLibrary(
      URL(filePath: #filePath).deletingLastPathComponent().appending(
        path: "../SecretTestSupport/SecretScan/secret-scan.c"
      )
      .standardized)
    var environment = instance.environment
    (environment["LD_PRELOAD"], environment["SECRET_SCAN_HEX"]) = (scanner.path, hex)
    return try runProcess(
      program, arguments, input: input.map { Array($0.utf8) }, environment: environment, in: instance.bus.directory)
  }

  @Test(
    "get and get --json leave no copy of the secret they print where a core dump would show it; a shell that read it leaves one (the scan's positive control)",
    arguments: [["get", "scan", "me"], ["get", "--json", "scan", "me"]])
  func printingASecretLeavesNoPlaintextCopy(arguments: [String]) async throws {
    try await withProvider(.secretd) { instance in
      let stored = try instance.run(
        "secret-tool", ["store", "--label=scan", "service", "scan", "account", "me"], input: Array(Self.secret.utf8))
      try #require(stored.status == 0, "\(stored.stderrText)")
      let control = try Self.scanned(instance, "/bin/bash", ["-c", "read -r kept; echo ${#kept}"], input: Self.secret)
      try #require(
        (Self.copies(left: control) ?? 0) >= 1, "the scanner finds a copy a shell kept: \(control.stderrText)")
      let printed = try Self.scanned(instance, try secretctlPath(), arguments)
      #expect(printed.status == 0, "\(printed.stderrText)")
      #expect(printed.stdoutText.contains(Self.secret))
      #expect(Self.copies(left: printed) == 0, "\(printed.stderrText)")
    }
  }
}
