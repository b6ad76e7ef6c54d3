// Manual pages in man(7) markup, built from the same option and argument declarations that
// parsing and --help use, so `man secretctl` can never describe another program than the one
// installed beside it.

/// A manual page: a title line, then sections of paragraphs and option lists.
///
/// ```swift
/// let page = ManualPage(
///   name: "secretd", section: 8, summary: "in-memory Secret Service provider", source: "swift-secrets 0.1.0",
///   sections: [.init("SYNOPSIS", [.synopsis("secretd", "[OPTION...]")]), .init("OPTIONS", [.options(options)])])
/// print(page.roff)
/// ```
package struct ManualPage: Sendable {
  package var name: String
  package var section: Int
  /// The NAME line after the dash, lowercase, no full stop.
  package var summary: String
  /// Where the program comes from, shown in the page's footer (`swift-secrets 0.1.0`).
  package var source: String
  package var sections: [Section]

  package init(name: String, section: Int, summary: String, source: String, sections: [Section]) {
    self.name = name
    self.section = section
    self.summary = summary
    self.source = source
    self.sections = sections
  }

  /// A section (`.SH`) or a subsection (`.SS`) of the page.
  package struct Section: Sendable {
    package var title: String
    package var blocks: [Block]

    package init(_ title: String, _ blocks: [Block]) {
      self.title = title
      self.blocks = blocks
    }
  }

  package enum Block: Sendable {
    /// Filled text; `code` in backquotes is set in bold.
    case paragraph(String)
    /// Hand-wrapped text, as --help shows it: filled again for the reader's terminal, except that
    /// a line that opens with a short label (`Exit status:`, `Example:`, `bash:`) starts anew.
    case text(String)
    /// A program name in bold followed by its usage words.
    case synopsis(String, String)
    case options([OptionSpec])
    case arguments([ArgumentSpec])
    /// A term and its description, as `.TP` sets them.
    case definitions([(term: String, description: String)])
    case subsection(Section)
  }

  /// The page in man(7) markup, as `man -l -` and man-db read it.
  package var roff: String {
    var lines = [
      ".TH \(Self.quoted(name.uppercased())) \(section) \"\" \(Self.quoted(source)) \(Self.quoted(Self.manualName(section)))",
      // No hyphenation and a ragged right edge: names and options stay whole.
      ".nh", ".ad l",
      ".SH NAME",
      "\(Self.escaped(name)) \\- \(Self.escaped(summary))",
    ]
    for section in sections { lines += Self.render(section, macro: ".SH") }
    return lines.joined(separator: "\n") + "\n"
  }

  private static func render(_ section: Section, macro: String) -> [String] {
    var lines = ["\(macro) \(quoted(section.title))"]
    for (index, block) in section.blocks.enumerated() {
      switch block {
      case .paragraph, .text: if index > 0 { lines.append(".PP") }
      default: break
      }
      lines += render(block)
    }
    return lines
  }

  private static func render(_ block: Block) -> [String] {
    switch block {
    case .paragraph(let text):
      return [text.split(separator: "\n").map { $0.trimmingLeadingSpaces }.joined(separator: " ")].map(inline)
    case .text(let text):
      var lines: [[Substring]] = []
      for line in text.split(separator: "\n").map(\.trimmingLeadingSpaces) {
        if lines.isEmpty || startsWithLabel(line) { lines.append([line]) } else { lines[lines.count - 1].append(line) }
      }
      return Array(lines.map { [inline($0.joined(separator: " "))] }.joined(separator: [".br"]))
    case .synopsis(let program, let words):
      return [".B \(escaped(program))", escaped(words)]
    case .options(let options):
      return options.flatMap { option in
        [".TP", "\\fB\(optionNames(option))\\fR\(optionValue(option))", inline(option.help)]
      }
    case .arguments(let arguments):
      return arguments.flatMap { argument in [".TP", "\\fI\(escaped(argument.usage))\\fR", inline(argument.help)] }
    case .definitions(let definitions):
      return definitions.flatMap { [".TP", "\\fB\(escaped($0.term))\\fR", inline($0.description)] }
    case .subsection(let section):
      return render(section, macro: ".SS")
    }
  }

  /// `Exit status: …`: up to sixteen letters and spaces, then a colon and a space.
  private static func startsWithLabel(_ line: Substring) -> Bool {
    guard let colon = line.firstIndex(of: ":"), line[colon...].hasPrefix(": ") else { return false }
    let label = line[..<colon]
    return (1...16).contains(label.count) && label.allSatisfy { $0.isLetter || $0 == " " }
  }

  /// `-e, --env` as the page shows an option's names.
  private static func optionNames(_ option: OptionSpec) -> String {
    let names = (option.short.map { ["-\($0)"] } ?? []) + ["--\(option.long)"]
    return names.map(escaped).joined(separator: ", ")
  }

  private static func optionValue(_ option: OptionSpec) -> String {
    option.valueName.map { " \\fI\(escaped($0))\\fR" } ?? ""
  }

  /// Escaped text in which `code` is bold.
  private static func inline(_ text: String) -> String {
    var result = ""
    var inCode = false
    for (index, piece) in text.split(separator: "`", omittingEmptySubsequences: false).enumerated() {
      if index > 0 {
        result += inCode ? "\\fR" : "\\fB"
        inCode.toggle()
      }
      result += escaped(String(piece))
    }
    return inCode ? result + "\\fR" : result
  }

  /// Text made literal for roff: backslashes and dashes (`\-` stays ASCII when copied from the
  /// page, which matters for options), an ellipsis as three dots (man renders for a terminal with
  /// no locale in ASCII, where it has no glyph), and a leading `.` or `'` that would start a
  /// request.
  package static func escaped(_ text: String) -> String {
    var escaped = ""
    for character in text {
      switch character {
      case "\\": escaped += "\\e"
      case "-": escaped += "\\-"
      case "…": escaped += "..."
      default: escaped.append(character)
      }
    }
    if let first = escaped.first, first == "." || first == "'" { escaped = "\\&" + escaped }
    return escaped
  }

  private static func quoted(_ text: String) -> String {
    "\"" + escaped(text).replacingEvery("\"", with: "\\(dq") + "\""
  }

  private static func manualName(_ section: Int) -> String {
    switch section {
    case 1: "User Commands"
    case 5: "File Formats"
    case 8: "System Administration"
    default: "Manual"
    }
  }
}

extension Substring {
  fileprivate var trimmingLeadingSpaces: Substring { drop { $0 == " " } }
}

extension String {
  fileprivate func replacingEvery(_ target: Character, with replacement: String) -> String {
    split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
