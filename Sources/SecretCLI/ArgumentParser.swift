// The table types of the command line and the one generic parser every command goes through.
// Commands declare what they accept; parsing, usage errors, help text and shell completion are
// all derived from those declarations, so they can never disagree.
import SystemCalls

/// A positional argument of a command, such as `SERVICE` or `[ACCOUNT]`.
struct ArgumentSpec: Sendable, Hashable {
  var name: String
  var help: String
  var isOptional: Bool
  /// Takes every remaining positional word (at least one unless also optional).
  var isVariadic: Bool
  /// Words offered by shell completion (not enforced: the command validates).
  var completions: [String]

  init(_ name: String, _ help: String, optional: Bool = false, variadic: Bool = false, completions: [String] = []) {
    self.name = name
    self.help = help
    self.isOptional = optional
    self.isVariadic = variadic
    self.completions = completions
  }

  /// `SERVICE`, `[ACCOUNT]`, `ATTR=VALUE...` or `[ATTR=VALUE...]`, as usage lines show it.
  var usage: String {
    let word = isVariadic ? "\(name)..." : name
    return isOptional ? "[\(word)]" : word
  }
}

/// An option of a command: a flag (`--json`) or one that takes a value (`--label TEXT`).
struct OptionSpec: Sendable, Hashable {
  /// The long name without dashes; parsed values are keyed by it.
  var long: String
  var short: Character?
  /// The placeholder shown for the value (`TEXT`); `nil` makes the option a flag.
  var valueName: String?
  var isRepeatable: Bool
  var help: String
  /// Values offered by shell completion (not enforced: the command validates).
  var completions: [String]

  init(
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

  var isFlag: Bool { valueName == nil }

  /// `-e, --env VAR=SERVICE[/ACCOUNT]` as help shows it.
  var synopsis: String {
    let names = (short.map { "-\($0), " } ?? "    ") + "--\(long)"
    return valueName.map { "\(names) \($0)" } ?? names
  }

  /// Every command answers `--help` / `-h`, without declaring it.
  static let help = OptionSpec("help", short: "h", help: "Show this help and exit.")
}

/// One command of the table: what it is called, what it takes, and what runs it.
struct CommandSpec: Sendable {
  var name: String
  var summary: String
  /// Paragraphs shown after the usage line in `--help`: exit statuses, examples, caveats.
  var discussion: String
  var arguments: [ArgumentSpec]
  var options: [OptionSpec]
  /// Stop reading options at the first positional word, as env(1) does, so that
  /// `exec -e X=s sh -c '…'` passes `-c` to the command rather than to us.
  var optionsEndAtFirstPositional: Bool
  var run: @Sendable (ParsedArguments, Console) throws(CLIError) -> ExitStatus

  init(
    _ name: String, summary: String, discussion: String = "", arguments: [ArgumentSpec] = [],
    options: [OptionSpec] = [], optionsEndAtFirstPositional: Bool = false,
    run: @escaping @Sendable (ParsedArguments, Console) throws(CLIError) -> ExitStatus
  ) {
    self.name = name
    self.summary = summary
    self.discussion = discussion
    self.arguments = arguments
    self.options = options
    self.optionsEndAtFirstPositional = optionsEndAtFirstPositional
    self.run = run
  }

  /// The declared options plus the implicit `--help`.
  var allOptions: [OptionSpec] { options + [.help] }
}

/// What the parser found: positional words by argument name, option values by long name.
struct ParsedArguments: Sendable, Hashable {
  var arguments: [String: [String]] = [:]
  var options: [String: [String]] = [:]
  var flags: Set<String> = []

  init(arguments: [String: [String]] = [:], options: [String: [String]] = [:], flags: Set<String> = []) {
    self.arguments = arguments
    self.options = options
    self.flags = flags
  }

  /// The single word given for a positional argument, if any.
  func argument(_ name: String) -> String? { arguments[name]?.first }
  /// Every word of a variadic argument.
  func all(_ name: String) -> [String] { arguments[name] ?? [] }
  /// The last value of an option (a repeated non-repeatable option is a usage error anyway).
  func option(_ long: String) -> String? { options[long]?.last }
  func values(_ long: String) -> [String] { options[long] ?? [] }
  func flag(_ long: String) -> Bool { flags.contains(long) }

  var wantsHelp: Bool { flag(OptionSpec.help.long) }
}

extension CommandSpec {
  /// Parses the words after the command name.
  ///
  /// Accepts `--name value`, `--name=value`, `-n value`, `-nvalue`; `--` ends options; a lone
  /// `-` is a positional word. `--help` wins over every other problem, so a user who asks for
  /// help gets it even after a mistake earlier on the line.
  func parse(_ words: [String]) throws(CLIError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var positionals: [String] = []
    var problem: CLIError?
    var index = 0
    var optionsEnded = false

    func record(_ option: OptionSpec, _ value: String?) {
      if !option.isRepeatable, parsed.flags.contains(option.long) || parsed.options[option.long] != nil {
        problem = problem ?? usageError("--\(option.long) is given more than once")
      }
      if let value { parsed.options[option.long, default: []].append(value) } else { parsed.flags.insert(option.long) }
    }

    while index < words.count {
      let word = words[index]
      index += 1
      if optionsEnded || word == "-" || !word.hasPrefix("-") {
        positionals.append(word)
        if optionsEndAtFirstPositional { optionsEnded = true }
        continue
      }
      if word == "--" {
        optionsEnded = true
        continue
      }
      let (name, attached) = Self.split(word)
      guard let option = lookUp(name) else {
        problem = problem ?? usageError("unknown option \(name)")
        continue
      }
      if option.isFlag {
        if attached != nil { problem = problem ?? usageError("--\(option.long) takes no value") }
        record(option, nil)
      } else if let attached {
        record(option, attached)
      } else if index < words.count {
        record(option, words[index])
        index += 1
      } else {
        problem = problem ?? usageError("--\(option.long) needs a value (\(option.valueName ?? "VALUE"))")
      }
    }
    if parsed.wantsHelp { return parsed }
    if let problem { throw problem }
    parsed.arguments = try assign(positionals)
    return parsed
  }

  /// `--name=value` → (`--name`, `value`); `-evalue` → (`-e`, `value`); otherwise no value.
  private static func split(_ word: String) -> (name: String, value: String?) {
    if word.hasPrefix("--") {
      guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
      return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }
    let afterDash = word.index(after: word.startIndex)
    let rest = word[word.index(after: afterDash)...]
    return ("-" + String(word[afterDash]), rest.isEmpty ? nil : String(rest))
  }

  private func lookUp(_ name: String) -> OptionSpec? {
    if name.hasPrefix("--") { return allOptions.first { "--\($0.long)" == name } }
    return allOptions.first { $0.short.map { "-\($0)" } == name }
  }

  /// Hands positional words to the declared arguments in order; the variadic one takes the rest.
  private func assign(_ words: [String]) throws(CLIError) -> [String: [String]] {
    var assigned: [String: [String]] = [:]
    var remaining = words[...]
    for argument in arguments {
      if argument.isVariadic {
        if !remaining.isEmpty { assigned[argument.name] = Array(remaining) }
        remaining = []
      } else if let word = remaining.popFirst() {
        assigned[argument.name] = [word]
      }
      if assigned[argument.name] == nil, !argument.isOptional {
        throw usageError("missing \(argument.name)")
      }
    }
    // The extra words are not repeated: one may be a secret typed where it does not belong.
    if !remaining.isEmpty { throw usageError("too many arguments (\(remaining.count) extra, not shown)") }
    return assigned
  }

  func usageError(_ message: String) -> CLIError {
    .usage("\(message); see `secretctl \(name) --help`")
  }
}
