import Foundation
import Testing

/// Allocation counts, in the manner of swift-nio's allocation counters: exact numbers that a
/// change to the mutation path breaks, with no timing involved. A helper process counts its
/// own mallocs (its malloc is the counting one of `AllocationCounting`).
@Suite("Allocations")
struct AllocationTests {
  @Test func withLockOnAnInMemoryValueMakesNoAllocation() throws {
    let child = try HelperProcess(["allocations", "-", "1000"])
    let line = try child.readLine()
    #expect(child.wait() == .exited(0))
    let counts = line.split(separator: " ").compactMap { Int($0) }
    try #require(counts.count == 2, "the helper said \(line)")
    #expect(counts[1] >= 1_000, "the counter did not see 1,000 objects allocated: \(counts[1])")
    #expect(counts[0] == 0, "1,000 withLock calls made \(counts[0]) allocations")
  }
}
