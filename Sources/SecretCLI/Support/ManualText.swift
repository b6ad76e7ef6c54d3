// secretctl(1), generated from the command table, as --help is.
import CommandLineSyntax

/// What `secretctl --manual` prints: the manual page in man(7) markup.
var programManualPage: String {
  ManualPage(
    name: "secretctl", section: 1, summary: programSummary, source: "swift-secrets \(secretctlVersion)",
    sections: [
      .init("SYNOPSIS", [.synopsis("secretctl", "COMMAND [OPTIONS] [ARGUMENTS]")]),
      .init("DESCRIPTION", [.paragraph("secretctl: \(programSummary)."), .text(programNotes)]),
      .init("OPTIONS", [.options(programOptions)]),
      .init("COMMANDS", commandTable.map { .subsection($0.manualSection) }),
      .init("SEE ALSO", [.paragraph("`secretd`(8), `secret-tool`(1), `git-credential`(1)")]),
    ]
  ).roff
}

extension CommandSpec {
  /// The command's subsection: its usage, summary, discussion, arguments and options.
  fileprivate var manualSection: ManualPage.Section {
    var blocks: [ManualPage.Block] = [
      .synopsis("secretctl", String(usageLine.dropFirst("secretctl ".count))), .paragraph(summary),
    ]
    if !discussion.isEmpty { blocks.append(.text(discussion)) }
    if !arguments.isEmpty { blocks.append(.arguments(arguments)) }
    blocks.append(.options(allOptions))
    return .init("secretctl \(name)", blocks)
  }
}
