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
  guard let first = arguments.first else {
    throw .usage("no command given; see `secretctl --help`")
  }
  switch first {
  case "--help", "-h", "help":
    if first == "help", arguments.count > 1 {
      guard let spec = command(named: arguments[1]) else { throw unknownCommand(arguments[1]) }
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
    guard let spec = command(named: first) else {
      throw first.hasPrefix("-") ? .usage("unknown option \(first); see `secretctl --help`") : unknownCommand(first)
    }
    let parsed = try spec.parse(Array(arguments.dropFirst()))
    if parsed.wantsHelp {
      console.print(spec.helpText)
      return .success
    }
    return try spec.run(parsed, console)
  }
}

private func unknownCommand(_ name: String) -> CLIError {
  .usage("unknown command '\(name)'; see `secretctl --help`")
}
