// secretctl starts on every `get` and every git credential lookup, so what it links is part of
// its speed: _StringProcessing, or any of Foundation's types beyond `Date`, put megabytes of
// relocations and protocol conformances in front of each start (Benchmarks/NOTES.md). A call
// such as `String.contains("text")` or `firstRange(of:)` on bytes is enough to link them.
// A debug build links the libraries dynamically, so each use shows up as a symbol it imports.
import Foundation
import SecretTestSupport
import Testing

@Suite("what secretctl links")
struct SecretctlLinkTests {
  /// The Swift symbols `program` imports from `library` (a module's mangled name), demangled.
  static func imports(of program: String, from library: String) throws -> [String] {
    let symbols = try runProcess(
      "nm", ["--dynamic", "--undefined-only", "--demangle=none", try builtExecutable(program).path],
      environment: environmentWithoutBus, in: FileManager.default.temporaryDirectory)
    #expect(symbols.status == 0, "\(symbols.stderrText)")
    let mangled = symbols.stdoutText.split(separator: "\n").compactMap { $0.split(separator: " ").last }
      .filter { $0.contains(library) }.map(String.init)
    guard !mangled.isEmpty else { return [] }
    let demangled = try runProcess(
      "swift", ["demangle", "--simplified"] + mangled, environment: environmentWithoutBus,
      in: FileManager.default.temporaryDirectory)
    return demangled.stdoutText.split(separator: "\n").map(String.init)
  }

  @Test("secretctl uses nothing of _StringProcessing and nothing of Foundation but Date")
  func secretctlLinksNoTextProcessingOrFoundationBeyondDate() throws {
    #expect(try Self.imports(of: "secretctl", from: "17_StringProcessing") == [])
    #expect(try Self.imports(of: "secretctl", from: "12_RegexParser") == [])
    let foundation = try Self.imports(of: "secretctl", from: "20FoundationEssentials")
    // Positive control: secretctl does use Date (an item's dates), so the check can see Foundation.
    #expect(foundation.contains { $0.contains("Date") })
    #expect(foundation.filter { !$0.contains("Date") } == [])
  }
}
