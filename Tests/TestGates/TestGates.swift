// Which tests may run here. Security tests need root (to read another process's memory, to run
// a process as another user, to boot a container); elsewhere they are skipped, Swift Testing
// prints each skip with its reason, and `make test` (scripts/test) ends by counting them. Where
// they must run (`.ci/run` sets SECRETS_REQUIRE_SECURITY_TESTS=1), a skip fails.
//
// A target of its own because it imports Testing, which the benchmarks that link
// SecretTestSupport must not: the toolchain has no Testing for builds that link the Swift
// runtime statically (`make bench` builds every target so), where this target is left empty.
#if canImport(Testing)
  public import Foundation
  import SecretTestSupport
  public import Testing

  /// Whether the security tests can run, and whether they must.
  public enum SecurityTests {
    public static let canRun = getuid() == 0
    public static let required = ProcessInfo.processInfo.environment["SECRETS_REQUIRE_SECURITY_TESTS"] == "1"
  }

  extension Trait where Self == ConditionTrait {
    /// Runs the test only as root; otherwise it is reported as skipped because of `reason`.
    public static func needsRoot(_ reason: Comment) -> Self { .enabled(if: SecurityTests.canRun, reason) }
  }

  /// What a script that boots a container (scripts/check-unit-in-container,
  /// scripts/check-deb-in-container) reported: its "ok"/"FAIL" lines and count, or that it
  /// cannot run on this machine (exit 77: not root, or no mounting allowed) and why.
  public enum ContainerCheck: Sendable {
    case ran(status: Int32, transcript: String)
    case cannotRun(reason: String)

    /// Runs `script` with `arguments`, outside any test bus, on a thread of its own.
    public static func run(_ script: URL, _ arguments: [String]) async throws -> ContainerCheck {
      let run = try await runProcessOnOwnThread(
        script.path, arguments, environment: environmentWithoutBus, in: URL(filePath: "/tmp"))
      let transcript = run.stdoutText + run.stderrText
      guard run.status == 77 else { return .ran(status: run.status, transcript: transcript) }
      let reason = transcript.split(separator: "\n").first { $0.hasPrefix("skipped: ") }
        .map { String($0.dropFirst("skipped: ".count)) }
      return .cannotRun(reason: reason ?? "the script cannot run here (exit 77)")
    }

    /// The check's status and transcript once it ran. Where it cannot run, the test is cancelled
    /// with the script's reason (a visible skip), or fails where the security tests are required.
    public func transcript() throws -> (status: Int32, text: String)? {
      switch self {
      case .ran(let status, let transcript):
        return (status, transcript)
      case .cannotRun(let reason):
        if SecurityTests.required {
          Issue.record("the container check could not run and SECRETS_REQUIRE_SECURITY_TESTS=1: \(reason)")
          return nil
        }
        try Test.cancel(Comment(rawValue: reason))
      }
    }
  }

  /// This package's folder.
  public let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
#endif
