// Every figure the README gives comes from Benchmarks/RESULTS.md, the transcript `make bench`
// writes, and ratios come with their spread: nothing is typed in by hand or picked from a run.
import Foundation
import SecretTestSupport
import TestGates
import Testing

@Suite("benchmark figures")
struct BenchmarkFigureTests {
  static func text(_ path: String) throws -> String {
    try String(contentsOf: packageRoot.appending(path: path), encoding: .utf8)
  }

  /// The README's measured figures, which it gives in its Benchmarks section only (elsewhere
  /// it speaks of limits and defaults, which are configured, not measured).
  static func figureText(of readme: String) -> String {
    readme.components(separatedBy: "\n## ").filter { $0.hasPrefix("Benchmarks\n") }.joined()
  }

  /// Every number of a text (`1,644`, `2.8`, `0.82`), thousands separators left out.
  static func numbers(in text: String) -> [String] {
    text.matches(of: /\d[\d,]*(\.\d+)?/).map { String($0.output.0).replacingOccurrences(of: ",", with: "") }
      .map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 }
  }

  /// The numbers of `figures` that `results` does not have.
  static func missing(_ figures: String, from results: String) -> [String] {
    let known = Set(numbers(in: results))
    return numbers(in: figures).filter { !known.contains($0) }
  }

  /// Ratios (`2.8×`) given without the interquartile range that follows them in the transcript.
  static func ratiosWithoutSpread(in text: String) -> [String] {
    text.matches(of: /\d+(\.\d+)?×/).filter { match in
      let before = text[..<match.range.lowerBound].last
      let isRangeEnd = before == "–"
      return !isRangeEnd && !text[match.range.upperBound...].hasPrefix(" (IQR")
    }.map { String(text[$0.range]) }
  }

  @Test("every figure the README gives is in Benchmarks/RESULTS.md, each ratio with its IQR")
  func readmeFiguresComeFromTheTranscript() throws {
    let figures = Self.figureText(of: try Self.text("README.md"))
    let results = try Self.text("Benchmarks/RESULTS.md")
    #expect(Self.numbers(in: figures).count > 20, "the README's Benchmarks section was not found")
    #expect(Self.missing(figures, from: results).isEmpty, "not in RESULTS.md: \(Self.missing(figures, from: results))")
    #expect(
      Self.ratiosWithoutSpread(in: figures).isEmpty,
      "ratios without their IQR: \(Self.ratiosWithoutSpread(in: figures))")
  }

  @Test("the checker finds a figure the transcript lacks and a ratio given without its spread")
  func checkerControls() {
    let results = "| secretd | 1644 (IQR 1516–1728, n=7) | 2.80 (IQR 2.61–3.02) |"
    #expect(Self.missing("stores 1,644 (IQR 1,516–1,728); 2.80× (IQR 2.61–3.02)", from: results).isEmpty)
    #expect(Self.missing("stores 1,645 a second", from: results) == ["1645"])
    #expect(Self.ratiosWithoutSpread(in: "2.80× (IQR 2.61–3.02) and the best end 2.61× and 2.61–3.02×") == ["2.61×"])
  }

  @Test("RESULTS.md says where, when and with what it was measured, and how many rounds")
  func transcriptSaysHowItWasMade() throws {
    let results = try Self.text("Benchmarks/RESULTS.md")
    for field in [
      "- date: ", "- machine: ", "- toolchain: Swift version", "- commit: ", "- load average before the run: ",
    ] {
      #expect(results.contains("\n\(field)"), "RESULTS.md lacks \(field)")
    }
    #expect(results.contains("n="), "no figure says its number of rounds")
    #expect(results.contains("## SecretdBenchmark") && results.contains("## SecretsBenchmark"))
  }
}
