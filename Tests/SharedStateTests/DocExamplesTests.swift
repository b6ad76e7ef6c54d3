import Foundation
import Testing

/// Every example in SharedState's documentation compiles: each one stands, line for line and in
/// order, in a file of these tests (most in `DocExamples/`), which the compiler checks.
@Suite("Documentation examples")
struct DocExamplesTests {
  /// The package's root, from this file's place in it.
  static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test func everyExampleInSharedStatesDocumentationIsCompiledByTheseTests() throws {
    let examples = try Self.examples(in: Self.root.appending(path: "Sources/SharedState"))
    #expect(examples.count >= 25, "the documentation's examples were not found: \(examples.count)")
    let compiled = try Self.swiftFiles(in: Self.root.appending(path: "Tests/SharedStateTests")).map { file in
      try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(Self.normalized).filter { !$0.isEmpty }
    }
    for example in examples {
      let lines = example.lines.map(Self.normalized).filter { !$0.isEmpty }
      #expect(
        compiled.contains { Self.holds($0, lines) },
        "The example at \(example.place) is not compiled by SharedStateTests: copy it into DocExamples/")
    }
  }

  @Test func theCheckFindsAnExampleThatIsNotThere() {
    let file = ["func f() {", "let a = 1", "print(a)", "}"]
    #expect(Self.holds(file, ["let a = 1", "print(a)"]))
    #expect(!Self.holds(file, ["let a = 2", "print(a)"]))
    #expect(!Self.holds(file, ["print(a)", "let a = 1"]), "lines out of order")
  }

  struct Example {
    var place: String
    var lines: [String]
  }

  /// The `swift` code blocks of the doc comments and articles under `folder`.
  static func examples(in folder: URL) throws -> [Example] {
    var examples: [Example] = []
    let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).sorted()
    for path in files where path.hasSuffix(".swift") || path.hasSuffix(".md") {
      let lines = try String(contentsOf: folder.appending(path: path), encoding: .utf8)
        .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      let inComments = path.hasSuffix(".swift")
      var current: Example?
      for (number, line) in lines.enumerated() {
        var text = line.trimmingCharacters(in: .whitespaces)
        if inComments {
          guard text.hasPrefix("///") else { continue }
          text = String(text.dropFirst(3))
        }
        let fence = text.trimmingCharacters(in: .whitespaces)
        if current == nil, fence == "```swift" {
          current = Example(place: "\(path):\(number + 1)", lines: [])
        } else if let example = current, fence == "```" {
          examples.append(example)
          current = nil
        } else if current != nil {
          current?.lines.append(text)
        }
      }
    }
    return examples
  }

  static func swiftFiles(in folder: URL) throws -> [URL] {
    try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
      .map { folder.appending(path: $0) }
  }

  /// A line without its indentation, with one space wherever it had several (the formatter
  /// aligns trailing comments differently from the documentation).
  static func normalized(_ line: some StringProtocol) -> String {
    line.split(whereSeparator: \.isWhitespace).joined(separator: " ")
  }

  /// Whether `file` holds `example`'s lines in order, close together: scaffolding (a function
  /// around statements) may stand between them, a few lines at most.
  static func holds(_ file: [String], _ example: [String]) -> Bool {
    guard let first = example.first else { return true }
    let slack = 8
    for start in file.indices where file[start] == first {
      var position = start + 1
      var matched = 1
      while matched < example.count, position < file.count, position - start < example.count + slack {
        if file[position] == example[matched] { matched += 1 }
        position += 1
      }
      if matched == example.count { return true }
    }
    return false
  }
}
