// The table of commands: everything the parser, help and completion know comes from here.
import CommandLineSyntax

package let secretctlVersion = swiftSecretsVersion

/// Arguments and options shared by several commands, declared once so they read the same.
enum Common {
  static let service = ArgumentSpec("SERVICE", "The service the secret is for, such as github.com.")
  static let account = ArgumentSpec(
    "ACCOUNT", "The account or user name; items are found by service and account.", optional: true)
  static let json = OptionSpec("json", help: "Print JSON instead of text.")
  static let collectionFilter = OptionSpec(
    "collection", value: "NAME", completions: ["default", "session"],
    help: "Look only in this collection: default, session, or an object path.")
}

/// Every command, in the order help lists them.
let commandTable: [CommandSpec] = [
  ItemCommands.get, ItemCommands.set, ItemCommands.delete, ItemCommands.search,
  CollectionCommands.lock, CollectionCommands.unlock, CollectionCommands.status,
  ReferenceCommands.read, ExecCommand.spec, ReferenceCommands.run, ReferenceCommands.inject, GitCredential.spec,
  SetupCommand.spec, Completion.spec,
]

func command(named name: String) -> CommandSpec? {
  commandTable.first { $0.name == name }
}

/// What `secretctl` itself accepts before a command.
let programOptions: [OptionSpec] = [
  OptionSpec("help", short: "h", help: "Show this help and exit."),
  OptionSpec("version", help: "Print the version and exit."),
  OptionSpec("manual", help: "Print this manual page, secretctl(1), in roff (`secretctl --manual | man -l -`)."),
]
