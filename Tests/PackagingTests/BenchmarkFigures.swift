// Reading measured figures out of Benchmarks/RESULTS.md, each with the label of the line it is
// on, and out of the README's table of figures, so that each README figure can be matched to
// the one line of the transcript it comes from.
import Foundation

/// A measured figure: a median and the two ends of its spread, as written, thousands
/// separators left out.
struct MeasuredFigure: Equatable, CustomStringConvertible {
  var median: String
  var low: String
  var high: String
  /// `IQR` (interquartile range), or `rounds` (the lowest and highest of the rounds' medians,
  /// which the fairness benchmark gives).
  var spread: String

  var description: String { "\(median) (\(spread) \(low)–\(high))" }
}

/// Where a figure of RESULTS.md is: its section, the words of the lines it sits under or in
/// (the last heading above it, the lines it is indented under, its table row or its own line's
/// first words), and its own label (the words just before it, or its table column).
struct ResultsFigure {
  var section: String
  var context: [String]
  var label: String
  var figure: MeasuredFigure
}

/// The RESULTS.md figure a README figure is quoted from: its section, words each found in one
/// of its context lines, and its label exactly.
struct FigureSource: CustomStringConvertible {
  var section: String
  var context: [String]
  var label: String

  init(_ section: String, _ context: [String], _ label: String) {
    (self.section, self.context, self.label) = (section, context, label)
  }

  func matches(_ candidate: ResultsFigure) -> Bool {
    candidate.section == section && candidate.label == label
      && context.allSatisfy { words in candidate.context.contains { $0.contains(words) } }
  }

  var description: String { "\(section) › \(context.joined(separator: " › ")) › \(label)" }
}

/// One row of the README's table of figures: what is measured, under which conditions (its
/// first cell), and the figures quoted for it.
struct ReadmeRow {
  var what: String
  var figures: [MeasuredFigure]
  /// Numbers of the figure cells that are not a figure with its spread.
  var withoutSpread: [String]
}

enum BenchmarkFigures {
  /// A number as written: `1,976`, `0.37`.
  private static let number = #"(\d[\d,]*(?:\.\d+)?)"#
  /// The figures of `text`, each with the range it takes: a median and its spread, with the
  /// units either may carry (`1,976 (IQR 1,760–2,149)`, `9.48× (IQR 9.16–12.28)`,
  /// `0.37 ms (rounds 0.35 ms–0.56 ms)`, `0.76 (IQR 0.63–0.93, n=200) ms`).
  static func figures(in text: String) -> [(figure: MeasuredFigure, range: Range<String.Index>)] {
    let pattern =
      /(\d[\d,]*(?:\.\d+)?)(?: ?(?:ms|µs|×|%))? \((IQR|rounds) (\d[\d,]*(?:\.\d+)?)(?: ?ms)?–(\d[\d,]*(?:\.\d+)?)(?: ?ms)?(?:, n=\d+)?\)(?: ?(?:ms|%))?/
    return text.matches(of: pattern).map { match in
      let (_, median, spread, low, high) = match.output
      let value = { (text: Substring) in text.replacingOccurrences(of: ",", with: "") }
      return (
        MeasuredFigure(median: value(median), low: value(low), high: value(high), spread: String(spread)), match.range
      )
    }
  }

  /// Every number of a text (`1,644`, `2.8`, `0.82`), thousands separators left out.
  static func numbers(in text: String) -> [String] {
    text.matches(of: /\d[\d,]*(\.\d+)?/).map { String($0.output.0).replacingOccurrences(of: ",", with: "") }
      .map { $0.hasSuffix(",") ? String($0.dropLast()) : $0 }
  }

  /// The cells of a table line (`| a | b |`), trimmed.
  static func cells(of line: Substring) -> [String] {
    line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
      .map { $0.trimmingCharacters(in: .whitespaces) }
  }

  /// A label's words, without the spaces and punctuation around them.
  private static func trimmed(_ text: Substring) -> String {
    text.trimmingCharacters(in: .whitespaces.union(.init(charactersIn: ",;:")))
  }

  /// Every figure of RESULTS.md with where it is.
  static func resultsFigures(_ results: String) -> [ResultsFigure] {
    var found: [ResultsFigure] = []
    var section = ""
    var heading = ""
    /// The lines above, by indentation: each line's first words.
    var outline: [(indent: Int, words: String)] = []
    var header: [String] = []
    for line in results.split(separator: "\n") where !line.hasPrefix("```") {
      if line.hasPrefix("## ") {
        (section, heading, outline, header) = (String(line.dropFirst(3)), "", [], [])
        continue
      }
      let indent = line.prefix { $0 == " " }.count
      let text = String(line.dropFirst(indent))
      let figures = Self.figures(in: text)
      if text.hasPrefix("|") {
        let cells = Self.cells(of: text[...])
        if figures.isEmpty {
          if !cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) { header = cells }
          continue
        }
        for (column, cell) in cells.enumerated() {
          guard let figure = Self.figures(in: cell).first?.figure else { continue }
          found.append(
            ResultsFigure(
              section: section, context: [heading, cells[0]], label: columnLabel(column, of: header), figure: figure))
        }
        continue
      }
      outline.removeAll { $0.indent >= indent }
      let ancestors = outline.map(\.words)
      let words = trimmed(figures.first.map { text[..<$0.range.lowerBound] } ?? text[...])
      outline.append((indent, words))
      guard !figures.isEmpty else {
        heading = words
        continue
      }
      var labelStart = text.startIndex
      for (figure, range) in figures {
        found.append(
          ResultsFigure(
            section: section, context: [heading] + ancestors + [words],
            label: trimmed(text[labelStart..<range.lowerBound]),
            figure: figure))
        labelStart = range.upperBound
      }
    }
    return found
  }

  /// A table column's header; one that more columns share (`secretd is × faster`) is named
  /// after the column before it too (`stores/s, secretd is × faster`).
  private static func columnLabel(_ column: Int, of header: [String]) -> String {
    guard column < header.count else { return "" }
    let name = header[column]
    guard column > 0, header.filter({ $0 == name }).count > 1 else { return name }
    return "\(header[column - 1]), \(name)"
  }

  /// The section of `readme` that gives measured figures (elsewhere the README speaks of limits
  /// and defaults, which are configured, not measured).
  static func figureSection(of readme: String) -> String {
    readme.components(separatedBy: "\n## ").filter { $0.hasPrefix("Benchmarks\n") }.joined()
  }

  /// The rows of the README's table of figures; numbers of its prose count as figure cells.
  static func readmeRows(_ readme: String) -> [ReadmeRow] {
    var rows: [ReadmeRow] = []
    for line in figureSection(of: readme).split(separator: "\n") {
      let cells = line.hasPrefix("|") ? Self.cells(of: line) : ["", String(line)]
      guard cells.count >= 2, cells != ["what", "figure"], !cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } })
      else { continue }
      let text = cells.dropFirst().joined(separator: " | ")
      let figures = Self.figures(in: text)
      var rest = ""
      var restStart = text.startIndex
      for range in figures.map(\.range) {
        rest += text[restStart..<range.lowerBound] + " "
        restStart = range.upperBound
      }
      rest += text[restStart...]
      let row = ReadmeRow(what: cells[0], figures: figures.map(\.figure), withoutSpread: numbers(in: rest))
      if line.hasPrefix("|") || !row.withoutSpread.isEmpty || !row.figures.isEmpty { rows.append(row) }
    }
    return rows
  }

  /// What is wrong with the README's figures against RESULTS.md, given where each row's figures
  /// come from (by its first cell): a row with no source, a figure without its spread, a
  /// source that is not one figure of the transcript, a figure that is not the transcript's
  /// (median and both ends), a condition of the row (`1,300 items`) that its sources' lines do
  /// not state. Empty when every figure is the transcript's.
  static func problems(readme: String, results: String, sources: [String: [FigureSource]]) -> [String] {
    let transcript = resultsFigures(results)
    var problems: [String] = []
    let rows = readmeRows(readme)
    for row in rows {
      if !row.withoutSpread.isEmpty { problems.append("\(row.what): without a spread: \(row.withoutSpread)") }
      guard let rowSources = sources[row.what] else {
        problems.append("\(row.what): no source in RESULTS.md is named for this row")
        continue
      }
      if rowSources.count != row.figures.count {
        problems.append("\(row.what): \(row.figures.count) figures, \(rowSources.count) sources")
      }
      var stated: Set<String> = []
      for (figure, source) in zip(row.figures, rowSources) {
        let candidates = transcript.filter(source.matches)
        guard candidates.count == 1, let quoted = candidates.first else {
          problems.append("\(row.what): \(candidates.count) figures of RESULTS.md at \(source)")
          continue
        }
        stated.formUnion(quoted.context.flatMap(numbers(in:)))
        if figure != quoted.figure {
          problems.append("\(row.what): \(figure) where RESULTS.md has \(quoted.figure) at \(source)")
        }
      }
      let unstated = numbers(in: row.what).filter { !stated.contains($0) }
      if !unstated.isEmpty {
        problems.append("\(row.what): \(unstated) not stated by the lines of its figures")
      }
    }
    for what in Set(sources.keys).subtracting(rows.map(\.what)) {
      problems.append("\(what): a source names a row the README does not have")
    }
    return problems
  }
}
