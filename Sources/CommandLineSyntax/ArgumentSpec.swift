// A positional argument, as a command declares it.

/// A positional argument of a command, such as `SERVICE` or `[ACCOUNT]`.
package struct ArgumentSpec: Sendable, Hashable {
  package var name: String
  package var help: String
  package var isOptional: Bool
  /// Takes every remaining positional word (at least one unless also optional).
  package var isVariadic: Bool
  /// Words offered by shell completion (not enforced: the command validates).
  package var completions: [String]
  /// The name of a list of words that only the program knows at completion time (such as the
  /// services stored now): completion scripts ask the program for it and offer its words.
  package var liveCompletions: String?

  package init(
    _ name: String, _ help: String, optional: Bool = false, variadic: Bool = false, completions: [String] = [],
    liveCompletions: String? = nil
  ) {
    self.name = name
    self.help = help
    self.isOptional = optional
    self.isVariadic = variadic
    self.completions = completions
    self.liveCompletions = liveCompletions
  }

  /// `SERVICE`, `[ACCOUNT]`, `ATTR=VALUE...` or `[ATTR=VALUE...]`, as usage lines show it.
  package var usage: String {
    let word = isVariadic ? "\(name)..." : name
    return isOptional ? "[\(word)]" : word
  }
}
