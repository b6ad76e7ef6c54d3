package import SystemCalls

/// Runs secretctl with the words after the program name and returns the exit status.
///
/// ```swift
/// secretctlMain(Array(CommandLine.arguments.dropFirst())).exit()
/// ```
package func secretctlMain(_ arguments: [String], console: Console = .standard) -> ExitStatus {
  do {
    return try dispatch(arguments, console: console)
  } catch {
    if let handOff = error.openBaoHandOff, console.openBao == nil, console.handsOffToOpenBao {
      return handOffToOpenBao(arguments, handOff, console: console)
    }
    console.report(error.message)
    return error.status
  }
}

private func dispatch(_ arguments: [String], console: Console) throws(CLIError) -> ExitStatus {
  var arguments = arguments[...]
  var console = console
  // Options of secretctl itself, before the command.
  while arguments.first == "--\(allowPlainTransfer.long)" {
    arguments.removeFirst()
    console.allowPlainTransfer()
  }
  guard let first = arguments.first else {
    throw .usage("no command given; see `secretctl --help`")
  }
  switch first {
  case "--help", "-h", "help":
    if first == "help", arguments.count > 1 {
      let words = Array(arguments.dropFirst())
      if words.count == 1, let help = groupHelpText(words[0]) {
        console.print(help)
        return .success
      }
      guard let (spec, _) = command(at: words) else { throw unknownCommand(words) }
      console.print(spec.helpText)
    } else {
      console.print(programHelpText)
    }
    return .success
  case "--version":
    console.print("secretctl \(secretctlVersion)\n")
    return .success
  case "--manual":
    console.print(programManualPage)
    return .success
  default:
    if arguments.count == 2, ["--help", "-h"].contains(arguments.last), let help = groupHelpText(first) {
      console.print(help)
      return .success
    }
    guard let (spec, rest) = command(at: Array(arguments)) else {
      throw first.hasPrefix("-")
        ? .usage("unknown option \(first); see `secretctl --help`") : unknownCommand(Array(arguments))
    }
    let parsed = try spec.parse(rest)
    if parsed.wantsHelp {
      console.print(spec.helpText)
      return .success
    }
    return try spec.run(parsed, console)
  }
}

/// An unknown command, with the nearest commands when the word looks like a slip of the keys.
private func unknownCommand(_ words: [String]) -> CLIError {
  let group = commandTable.filter { $0.words.count > 1 && $0.words[0] == words[0] }
  if !group.isEmpty {
    let given = words.count > 1 ? words[1] : ""
    let names = group.map { $0.words[1] }
    let guess = nearest(given, in: names).map { " (did you mean `secretctl \(words[0]) \($0)`?)" } ?? ""
    let what =
      given.isEmpty ? "`secretctl \(words[0])` needs one of" : "unknown command '\(words[0]) \(given)'\(guess); choose"
    return .usage("\(what) \(names.joined(separator: ", ")); see `secretctl --help`")
  }
  let guess =
    nearest(words[0], in: Array(Set(commandTable.map { $0.words[0] }))).map { " (did you mean `\($0)`?)" } ?? ""
  return .usage("unknown command '\(words[0])'\(guess); see `secretctl --help`")
}

/// The name closest to `word` when it is near enough to be a slip (a letter or two wrong,
/// missing, doubled or swapped, or a prefix of the name); nil otherwise.
func nearest(_ word: String, in names: [String]) -> String? {
  guard !word.isEmpty else { return nil }
  let prefixed = names.filter { $0.hasPrefix(word) }
  if prefixed.count == 1 { return prefixed[0] }
  let scored = names.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= max(1, min(2, $0.0.count / 3)) }
  return scored.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters each cost one.
func editDistance(_ left: String, _ right: String) -> Int {
  let a = Array(left)
  let b = Array(right)
  var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
  for i in 0...a.count { table[i][0] = i }
  for j in 0...b.count { table[0][j] = j }
  for i in stride(from: 1, through: a.count, by: 1) {
    for j in stride(from: 1, through: b.count, by: 1) {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
      }
    }
  }
  return table[a.count][b.count]
}
