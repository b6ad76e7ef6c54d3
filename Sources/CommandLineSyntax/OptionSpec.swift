// An option, as a command declares it.

/// An option of a command: a flag (`--json`) or one that takes a value (`--label TEXT`).
package struct OptionSpec: Sendable, Hashable {
  /// The long name without dashes; parsed values are keyed by it.
  package var long: String
  package var short: Character?
  /// The placeholder shown for the value (`TEXT`); `nil` makes the option a flag.
  package var valueName: String?
  package var isRepeatable: Bool
  package var help: String
  /// Values offered by shell completion (not enforced: the command validates).
  package var completions: [String]

  package init(
    _ long: String, short: Character? = nil, value valueName: String? = nil, repeatable: Bool = false,
    completions: [String] = [], help: String
  ) {
    self.long = long
    self.short = short
    self.valueName = valueName
    self.isRepeatable = repeatable
    self.help = help
    self.completions = completions
  }

  package var isFlag: Bool { valueName == nil }

  /// `-e, --env VAR=SERVICE[/ACCOUNT]` as help shows it.
  package var synopsis: String {
    let names = (short.map { "-\($0), " } ?? "    ") + "--\(long)"
    return valueName.map { "\(names) \($0)" } ?? names
  }

  /// Every command answers `--help` / `-h`, without declaring it.
  package static let help = OptionSpec("help", short: "h", help: "Show this help and exit.")
}
