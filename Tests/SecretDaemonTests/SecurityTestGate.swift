// Security tests need root: to read another process's memory, to run a process as another user,
// to boot a container. Elsewhere they are skipped, and Swift Testing prints each skip with its
// reason. Where they must run (`.ci/run` sets SECRETS_REQUIRE_SECURITY_TESTS=1), a skip fails.
import Foundation
import Testing

enum SecurityTests {
  static let canRun = getuid() == 0
  static let required = ProcessInfo.processInfo.environment["SECRETS_REQUIRE_SECURITY_TESTS"] == "1"
}

extension Trait where Self == ConditionTrait {
  /// Runs the test only as root; otherwise it is reported as skipped because of `reason`.
  static func needsRoot(_ reason: Comment) -> Self { .enabled(if: SecurityTests.canRun, reason) }
}

@Suite("security tests")
struct SecurityTestGateTests {
  @Test("security tests are not skipped where they are required (SECRETS_REQUIRE_SECURITY_TESTS=1)")
  func securityTestsRunWhereRequired() {
    if SecurityTests.required {
      #expect(SecurityTests.canRun, "the security tests need root and were skipped; run the suite as root")
    }
  }
}
