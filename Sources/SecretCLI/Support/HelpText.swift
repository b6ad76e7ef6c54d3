// Help text, generated from the command table.
import CommandLineSyntax

extension CommandSpec {
  /// `secretctl get [OPTIONS] SERVICE [ACCOUNT]`
  var usageLine: String {
    var words = ["secretctl", name]
    if !options.isEmpty { words.append("[OPTIONS]") }
    if optionsEndAtFirstPositional { words.append("[--]") }
    words += arguments.map(\.usage)
    return words.joined(separator: " ")
  }

  /// What `secretctl CMD --help` prints.
  var helpText: String {
    var text = "\(summary)\n\nUsage: \(usageLine)\n"
    if !arguments.isEmpty {
      text += "\nArguments:\n" + helpTable(arguments.map { ($0.name, $0.help) })
    }
    text += "\nOptions:\n" + helpTable(allOptions.map { ($0.synopsis, $0.help) })
    if !discussion.isEmpty { text += "\n" + discussion + "\n" }
    return text
  }
}

/// What secretctl is, for `--help` and the manual page.
let programSummary = "keep secrets in the Secret Service (secretd, gnome-keyring, KeePassXC, …)"

/// What holds for every command, for `--help` and the manual page.
let programNotes = """
  Secrets are never taken from the command line: `set` reads stdin or asks on the terminal.
  Exit status: 0 done, 1 not found, 2 usage error, 3 Secret Service error (unreachable,
  locked, prompt dismissed). Errors are one line on stderr that says what to do.
  """

/// What `secretctl --help` prints.
var programHelpText: String {
  var text = """
    secretctl: \(programSummary).

    Usage: secretctl COMMAND [OPTIONS] [ARGUMENTS]
           secretctl COMMAND --help

    Commands:

    """
  text += helpTable(commandTable.map { ($0.name, $0.summary) })
  text += "\nOptions:\n" + helpTable(programOptions.map { ($0.synopsis, $0.help) })
  text += "\n" + programNotes + "\n"
  return text
}

/// What `secretctl GROUP --help` prints for a group of commands such as `credential`; nil when
/// `name` is no group.
func groupHelpText(_ name: String) -> String? {
  let members = commandTable.filter { $0.words.count > 1 && $0.words[0] == name }
  guard !members.isEmpty else { return nil }
  return "Usage: secretctl \(name) COMMAND [OPTIONS] [ARGUMENTS]\n\nCommands:\n"
    + helpTable(members.map { ($0.words.dropFirst().joined(separator: " "), $0.summary) })
    + "\nSee `secretctl \(name) COMMAND --help`.\n"
}
