// Help text, generated from the command table.

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
      text += "\nArguments:\n" + table(arguments.map { ($0.name, $0.help) })
    }
    text += "\nOptions:\n" + table(allOptions.map { ($0.synopsis, $0.help) })
    if !discussion.isEmpty { text += "\n" + discussion + "\n" }
    return text
  }
}

/// What `secretctl --help` prints.
var programHelpText: String {
  var text = """
    secretctl: keep secrets in the Secret Service (secretd, gnome-keyring, KeePassXC, …).

    Usage: secretctl COMMAND [OPTIONS] [ARGUMENTS]
           secretctl COMMAND --help

    Commands:

    """
  text += table(commandTable.map { ($0.name, $0.summary) })
  text += "\nOptions:\n" + table(programOptions.map { ($0.synopsis, $0.help) })
  text += """

    Secrets are never taken from the command line: `set` reads stdin or asks on the terminal.
    Exit status: 0 done, 1 not found, 2 usage error, 3 Secret Service error (unreachable,
    locked, prompt dismissed). Errors are one line on stderr that says what to do.

    """
  return text
}

/// Two columns, the second aligned, wrapped to the terminal's customary 80 columns.
private func table(_ rows: [(String, String)]) -> String {
  let width = min((rows.map(\.0.count).max() ?? 0) + 2, 34)
  var text = ""
  for (left, right) in rows {
    let lead = "  " + left
    let indent = String(repeating: " ", count: width + 2)
    var lines = wrap(right, width: 78 - indent.count)
    let first = lines.isEmpty ? "" : lines.removeFirst()
    if lead.count < indent.count {
      text += lead + String(repeating: " ", count: indent.count - lead.count) + first + "\n"
    } else {
      text += lead + "\n" + indent + first + "\n"
    }
    for line in lines { text += indent + line + "\n" }
  }
  return text
}

private func wrap(_ text: String, width: Int) -> [String] {
  var lines: [String] = []
  var line = ""
  for word in text.split(separator: " ") {
    if !line.isEmpty, line.count + 1 + word.count > width {
      lines.append(line)
      line = ""
    }
    line += line.isEmpty ? String(word) : " " + word
  }
  if !line.isEmpty { lines.append(line) }
  return lines
}
