import Foundation
import SecretTestSupport
import Secrets
import Testing

/// Examples/CredentialService, the built program, run as systemd would run it: with
/// `CREDENTIALS_DIRECTORY` naming a folder of credentials (here one the test makes).
@Suite("The credential service example")
struct CredentialServiceExampleTests {
  let secret = "s3cr3t-token\n"

  /// The example's run with `CREDENTIALS_DIRECTORY` set to `folder` (unset when nil), as the
  /// user `user` when given (needs root).
  func runExample(
    _ folder: CredentialsFolder, directory: URL?, arguments: [String] = [], user: UInt32? = nil
  ) throws -> ProcessOutput {
    var environment = environmentWithoutBus
    environment["CREDENTIALS_DIRECTORY"] = directory?.path
    let example = try builtExecutable("credential-service").path
    guard let user else { return try runProcess(example, arguments, environment: environment, in: folder.root) }
    // The other user runs the built program where it is (the build folders are world-readable
    // under the usual umask 022; a copy could be busy in another test's fork) and reaches the
    // credentials folder, whose files' own modes then decide.
    for path in [folder.root.path, folder.url.path] { chmod(path, 0o755) }
    return try runProcess(
      "setpriv", ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", example] + arguments,
      environment: environment, in: folder.root)
  }

  @Test func aPresentCredentialIsCountedNeverPrinted() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", secret)
    let output = try runExample(folder, directory: folder.url)
    #expect(output.status == 0, "stderr: \(output.stderrText)")
    #expect(output.stdoutText == "credential api-token: 13 bytes\n")
    #expect(!output.stdoutText.contains("s3cr3t") && !output.stderrText.contains("s3cr3t"))
  }

  @Test func theCredentialToReadCanBeNamed() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", secret)
    try folder.put("db-password", "pw")
    let output = try runExample(folder, directory: folder.url, arguments: ["db-password"])
    #expect(output.stdoutText == "credential db-password: 2 bytes\n")
  }

  @Test func anAbsentCredentialExitsNonZeroSayingWhatTheUnitNeeds() throws {
    let folder = try CredentialsFolder()
    try folder.put("other", "x")
    let output = try runExample(folder, directory: folder.url)
    #expect(output.status == 1)
    #expect(output.stdout.isEmpty)
    #expect(
      output.stderrText == "credential-service: no credential \"api-token\" in \(folder.url.path); add "
        + "LoadCredential=api-token:%t/secretd/credentials to the unit\n")
  }

  @Test func withoutCredentialsDirectoryItExitsNonZeroSayingSo() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", secret)
    let output = try runExample(folder, directory: nil)
    #expect(output.status == 1)
    #expect(output.stdout.isEmpty)
    #expect(
      output.stderrText == "credential-service: no credential \"api-token\": CREDENTIALS_DIRECTORY is not set; "
        + "start me from a unit with LoadCredential=api-token:%t/secretd/credentials\n")
  }

  /// systemd gives a unit's credentials mode 0400 to the unit's user; another user is refused.
  /// As root, the example runs as nobody (65534); otherwise as the test's own user.
  @Test func aCredentialItsUserMayNotReadExitsNonZeroNamingIt() throws {
    let folder = try CredentialsFolder()
    try folder.put("api-token", Array(secret.utf8), mode: 0)
    let user = getuid() == 0 ? ForeignProvider.user : nil
    let output = try runExample(folder, directory: folder.url, user: user)
    #expect(output.status == 3)
    #expect(output.stdout.isEmpty)
    #expect(
      output.stderrText.hasPrefix(
        "credential-service: Could not read credential \"api-token\" at \(folder.path("api-token")): open failed: Permission denied"
      ))
    #expect(!output.stderrText.contains("s3cr3t"))
    chmod(folder.path("api-token"), 0o444)
    let readable = try runExample(folder, directory: folder.url, user: user)
    #expect(readable.stdoutText == "credential api-token: 13 bytes\n", "the same user reads it once its mode allows")
  }
}
