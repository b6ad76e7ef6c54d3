// The gate of the security tests (TestGates): they run exactly where they can, and where they
// are required they can.
import Foundation
import TestGates
import Testing

@Suite("security tests")
struct SecurityTestGateTests {
  @Test("the security tests run exactly where they can (as root), and where they are required they can")
  func securityTestsRunWhereTheyCanAndWhereRequired() async throws {
    // Both modes: the trait every security test carries enables it as root and only as root.
    #expect(try await ConditionTrait.needsRoot("gate").evaluate() == (getuid() == 0))
    #expect(SecurityTests.canRun == (getuid() == 0))
    if SecurityTests.required {
      #expect(SecurityTests.canRun, "the security tests need root and were skipped; run the suite as root")
    }
  }
}
