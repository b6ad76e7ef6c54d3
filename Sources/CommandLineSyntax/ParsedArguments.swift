// What the parser found on a command line.

/// What the parser found: positional words by argument name, option values by long name.
package struct ParsedArguments: Sendable, Hashable {
  package var arguments: [String: [String]] = [:]
  package var options: [String: [String]] = [:]
  package var flags: Set<String> = []

  package init(arguments: [String: [String]] = [:], options: [String: [String]] = [:], flags: Set<String> = []) {
    self.arguments = arguments
    self.options = options
    self.flags = flags
  }

  /// The single word given for a positional argument, if any.
  package func argument(_ name: String) -> String? { arguments[name]?.first }
  /// Every word of a variadic argument.
  package func all(_ name: String) -> [String] { arguments[name] ?? [] }
  /// The last value of an option (a repeated non-repeatable option is a usage error anyway).
  package func option(_ long: String) -> String? { options[long]?.last }
  package func values(_ long: String) -> [String] { options[long] ?? [] }
  package func flag(_ long: String) -> Bool { flags.contains(long) }

  package var wantsHelp: Bool { flag(OptionSpec.help.long) }
}
