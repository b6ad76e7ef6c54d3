// The one parser of the package's command lines (secretctl's commands and secretd): what a
// command accepts is declared once, and parsing, usage errors and help all come from that.

/// What one command line accepts: options, positional arguments, and where options end.
package struct CommandLineSyntax: Sendable {
  package var options: [OptionSpec]
  package var arguments: [ArgumentSpec]
  /// Stop reading options at the first positional word, as env(1) does, so that
  /// `exec -e X=s sh -c '…'` passes `-c` to the command rather than to us.
  package var optionsEndAtFirstPositional: Bool

  package init(options: [OptionSpec], arguments: [ArgumentSpec] = [], optionsEndAtFirstPositional: Bool = false) {
    self.options = options
    self.arguments = arguments
    self.optionsEndAtFirstPositional = optionsEndAtFirstPositional
  }

  /// Parses `words` (the words after the program or command name).
  ///
  /// Accepts `--name value`, `--name=value`, `-n value`, `-nvalue`; `--` ends options; a lone
  /// `-` is a positional word. `--help`, when declared, wins over every other problem, so a
  /// user who asks for help gets it even after a mistake earlier on the line.
  package func parse(_ words: [String]) throws(UsageError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var positionals: [String] = []
    var problem: UsageError?
    var index = 0
    var optionsEnded = false

    func record(_ option: OptionSpec, _ value: String?) {
      if !option.isRepeatable, parsed.flags.contains(option.long) || parsed.options[option.long] != nil {
        problem = problem ?? UsageError("--\(option.long) is given more than once")
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
        problem = problem ?? UsageError("unknown option \(name)")
        continue
      }
      if option.isFlag {
        if attached != nil { problem = problem ?? UsageError("--\(option.long) takes no value") }
        record(option, nil)
      } else if let attached {
        record(option, attached)
      } else if index < words.count {
        record(option, words[index])
        index += 1
      } else {
        problem = problem ?? UsageError("--\(option.long) needs a value (\(option.valueName ?? "VALUE"))")
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
    if name.hasPrefix("--") { return options.first { "--\($0.long)" == name } }
    return options.first { $0.short.map { "-\($0)" } == name }
  }

  /// Hands positional words to the declared arguments in order; the variadic one takes the rest.
  private func assign(_ words: [String]) throws(UsageError) -> [String: [String]] {
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
        throw UsageError("missing \(argument.name)")
      }
    }
    // The extra words are not repeated: one may be a secret typed where it does not belong.
    if !remaining.isEmpty { throw UsageError("too many arguments (\(remaining.count) extra, not shown)") }
    return assigned
  }
}

/// A command line the syntax does not accept; the message says what is wrong.
package struct UsageError: Error, Equatable, Sendable {
  package var message: String

  package init(_ message: String) { self.message = message }
}
