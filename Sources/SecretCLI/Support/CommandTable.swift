// The table of commands: everything the parser, help and completion know comes from here.
import CommandLineSyntax

package let secretctlVersion = swiftSecretsVersion

/// Arguments and options shared by several commands, declared once so they read the same.
enum Common {
  static let service = ArgumentSpec(
    "SERVICE", "The service the secret is for, such as github.com.", liveCompletions: "services")
  static let account = ArgumentSpec(
    "ACCOUNT", "The account or user name; items are found by service and account.", optional: true)
  static let json = OptionSpec("json", help: "Print JSON instead of text.")
  static let allowEmpty = OptionSpec("allow-empty", help: "Store an empty secret when the input is empty.")
  static let collectionFilter = OptionSpec(
    "collection", value: "NAME", completions: ["default", "session"],
    help: "Look only in this collection: default, session, or an object path.")
}

/// Every command, in the order help lists them.
let commandTable: [CommandSpec] =
  [
    ItemCommands.get, ItemCommands.set, ItemCommands.delete, SearchCommand.spec,
    CollectionCommands.lock, CollectionCommands.unlock, CollectionCommands.status,
    ReferenceCommands.read, ExecCommand.spec, ReferenceCommands.run, ReferenceCommands.inject, GitCredential.spec,
  ] + CredentialCommands.all + UnlockerCommands.all + [PamUnlockCommand.spec] + ExportImportCommands.all
  + [StoreCommands.discardRejected, SetupCommand.spec, Completion.spec]

func command(named name: String) -> CommandSpec? {
  commandTable.first { $0.name == name }
}

/// The command the first words name (`get`, or `credential set`), and the words after them.
func command(at words: [String]) -> (CommandSpec, [String])? {
  for spec in commandTable where words.starts(with: spec.words) {
    return (spec, Array(words.dropFirst(spec.words.count)))
  }
  return nil
}

/// Lets secretctl use a provider that offers only plain transfer, secrets then crossing the
/// bus unencrypted; given before the command.
let allowPlainTransfer = OptionSpec(
  "allow-plain-transfer",
  help: "Before the command: use a provider that cannot encrypt secrets on the bus (refused otherwise).")

/// What `secretctl` itself accepts before a command.
let programOptions: [OptionSpec] = [
  OptionSpec("help", short: "h", help: "Show this help and exit."),
  OptionSpec("version", help: "Print the version and exit."),
  allowPlainTransfer,
  OptionSpec("manual", help: "Print this manual page, secretctl(1), in roff (`secretctl --manual | man -l -`)."),
]
