// A secretctl command: what it is called, what it accepts (parsed by the package's one
// command-line parser), and what runs it.
import CommandLineSyntax
import SystemCalls

/// One command of the table: what it is called, what it takes, and what runs it.
struct CommandSpec: Sendable {
  var name: String
  var summary: String
  /// Paragraphs shown after the usage line in `--help`: exit statuses, examples, caveats.
  var discussion: String { makeDiscussion() }
  /// Builds the discussion when help asks for it: a command that runs never pays for the
  /// help text of every command in the table.
  private let makeDiscussion: @Sendable () -> String
  var arguments: [ArgumentSpec]
  var options: [OptionSpec]
  /// Stop reading options at the first positional word, as env(1) does, so that
  /// `exec -e X=s sh -c '…'` passes `-c` to the command rather than to us.
  var optionsEndAtFirstPositional: Bool
  var run: @Sendable (ParsedArguments, Console) throws(CLIError) -> ExitStatus

  init(
    _ name: String, summary: String, discussion: @autoclosure @escaping @Sendable () -> String = "",
    arguments: [ArgumentSpec] = [],
    options: [OptionSpec] = [], optionsEndAtFirstPositional: Bool = false,
    run: @escaping @Sendable (ParsedArguments, Console) throws(CLIError) -> ExitStatus
  ) {
    self.name = name
    self.summary = summary
    self.makeDiscussion = discussion
    self.arguments = arguments
    self.options = options
    self.optionsEndAtFirstPositional = optionsEndAtFirstPositional
    self.run = run
  }

  /// The words that name the command: `["get"]`, or `["credential", "set"]` for a command of a
  /// group.
  var words: [String] { name.split(separator: " ").map(String.init) }

  /// The declared options plus the implicit `--help`.
  var allOptions: [OptionSpec] { options + [.help] }

  /// What the command accepts, for the shared parser.
  var syntax: CommandLineSyntax {
    CommandLineSyntax(
      options: allOptions, arguments: arguments, optionsEndAtFirstPositional: optionsEndAtFirstPositional)
  }
}

extension CommandSpec {
  /// Parses the words after the command name (see ``CommandLineSyntax/parse(_:)``).
  func parse(_ words: [String]) throws(CLIError) -> ParsedArguments {
    do throws(UsageError) {
      return try syntax.parse(words)
    } catch {
      throw usageError(error.message + guess(forUnknownOptionIn: error.message))
    }
  }

  /// ` (did you mean --json?)` after `unknown option --jsn`, when one is near enough.
  private func guess(forUnknownOptionIn message: String) -> String {
    let prefix = "unknown option --"
    guard message.hasPrefix(prefix) else { return "" }
    return nearest(String(message.dropFirst(prefix.count)), in: allOptions.map(\.long)).map {
      " (did you mean --\($0)?)"
    }
      ?? ""
  }

  func usageError(_ message: String) -> CLIError {
    .usage("\(message); see `secretctl \(name) --help`")
  }
}
