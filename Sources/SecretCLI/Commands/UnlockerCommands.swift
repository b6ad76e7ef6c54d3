// unlocker add, list, remove: the ways into secretd's persistent collection (secretd
// --persistent: login). Each unlocker wraps the same data key, so adding or removing one
// re-encrypts no item; secretd keeps at least one.
import CommandLineSyntax
import SecretClient

enum UnlockerCommands {
  static let kind = ArgumentSpec("KIND", "passphrase, login or tpm.", completions: ["passphrase", "login", "tpm"])
  static let number = ArgumentSpec("NUMBER", "The unlocker's number, as `secretctl unlocker list` shows it.")

  static let add = CommandSpec(
    "unlocker add", summary: "Add a way to unlock secretd's persistent collection.",
    discussion: """
      secretd's persistent collection (secretd --persistent: login) opens with any of its
      unlockers. `passphrase` adds a passphrase, asked twice on the terminal with echo off or
      read from stdin with --password-stdin. `login` adds your login password the same way:
      with `secretctl pam-unlock` in the PAM stack, logging in unlocks login (after a change of
      the login password, add it again and remove the old one). `tpm` seals a key to this
      machine's TPM 2.0 (the one secretd --tcti names; /dev/tpmrm0 by default): secretd then
      unlocks login as it starts, with nobody typing, and the key file copied to another
      machine opens nothing there. login must be unlocked first (`secretctl unlock`); no item
      is re-encrypted.
      Exit status: 0 added (its number is printed), 2 usage error, 3 Secret Service error
      (login locked, or no TPM answered, among them).
      """,
    arguments: [kind], options: [CollectionCommands.passwordStdin]
  ) { arguments, console throws(CLIError) in
    let client = console.client()
    let number: UInt32
    switch arguments.argument(kind.name) {
    case "passphrase":
      let passphrase = try CollectionCommands.readPassphrase(arguments, console: console, creating: true)
      number = try service(client) { () throws(SecretError) in try client.addUnlocker(passphrase: passphrase) }
    case "login":
      let password = try CollectionCommands.readPassphrase(
        arguments, console: console, creating: true, prompt: "Your login password: ")
      number = try service(client) { () throws(SecretError) in try client.addLoginUnlocker(password: password) }
    case "tpm":
      guard !arguments.flag(CollectionCommands.passwordStdin.long) else {
        throw usage("a TPM unlocker takes no passphrase: leave out --password-stdin", of: "unlocker add")
      }
      number = try service(client) { () throws(SecretError) in try client.addTPMUnlocker() }
    case let other:
      throw usage("no unlocker of kind '\((other ?? "").visible)': passphrase, login or tpm", of: "unlocker add")
    }
    console.print("unlocker \(number) added\n")
    return .success
  }

  static let list = CommandSpec(
    "unlocker list", summary: "List the unlockers of secretd's persistent collection.",
    discussion: """
      One line per unlocker, in the order added: its number and its kind (passphrase, tpm).
      Listing does not need login unlocked.
      Exit status: 0 listed, 3 Secret Service error.
      """,
    options: [Common.json]
  ) { arguments, console throws(CLIError) in
    let client = console.client()
    let unlockers = try service(client) { () throws(SecretError) in try client.unlockers() }
    if arguments.flag(Common.json.long) {
      let entries = unlockers.map { JSON.object([("number", .number(Int($0.number))), ("kind", .string($0.kind))]) }
      console.print(JSON.array(entries).rendered)
    } else {
      console.print(unlockers.map { "\($0.number)  \($0.kind.visible)\n" }.joined())
    }
    return .success
  }

  static let remove = CommandSpec(
    "unlocker remove", summary: "Remove an unlocker of secretd's persistent collection.",
    discussion: """
      login must be unlocked first (`secretctl unlock`). secretd refuses to remove the last
      unlocker, without which no item could ever be opened again: add another first.
      Exit status: 0 removed, 1 no such unlocker, 2 usage error, 3 Secret Service error (the
      last unlocker among them).
      """,
    arguments: [number]
  ) { arguments, console throws(CLIError) in
    guard let text = arguments.argument(number.name), let value = UInt32(text) else {
      throw usage("NUMBER must be an unlocker's number, such as 2", of: "unlocker remove")
    }
    let client = console.client()
    try service(client) { () throws(SecretError) in try client.removeUnlocker(value) }
    return .success
  }

  static let all = [add, list, remove]

  /// A usage error of `command`, which a command's own closure cannot name through its spec.
  private static func usage(_ message: String, of command: String) -> CLIError {
    .usage("\(message); see `secretctl \(command) --help`")
  }
}
