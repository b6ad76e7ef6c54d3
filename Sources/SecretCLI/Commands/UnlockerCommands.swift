// unlocker add, list, remove: the ways into secretd's persistent collection (secretd
// --persistent: login). Each unlocker wraps the same data key, so adding or removing one
// re-encrypts no item; secretd keeps at least one.
import CommandLineSyntax
import GLibBridge
import SecretClient

enum UnlockerCommands {
  static let kind = ArgumentSpec("KIND", "passphrase or tpm.", completions: ["passphrase", "tpm"])
  static let number = ArgumentSpec("NUMBER", "The unlocker's number, as `secretctl unlocker list` shows it.")

  static let add = CommandSpec(
    "unlocker add", summary: "Add a way to unlock secretd's persistent collection.",
    discussion: """
      secretd's persistent collection (secretd --persistent: login) opens with any of its
      unlockers. `passphrase` adds a passphrase, asked twice on the terminal with echo off or
      read from stdin with --password-stdin. `tpm` seals a key to this machine's TPM 2.0 (the
      one secretd --tcti names; /dev/tpmrm0 by default): secretd then unlocks login as it
      starts, with nobody typing, and the key file copied to another machine opens nothing
      there. login must be unlocked first (`secretctl unlock`); no item is re-encrypted.
      Exit status: 0 added (its number is printed), 2 usage error, 3 Secret Service error
      (login locked, or no TPM answered, among them).
      """,
    arguments: [kind], options: [CollectionCommands.passwordStdin]
  ) { arguments, console throws(CLIError) in
    let reply: Variant
    switch arguments.argument(kind.name) {
    case "passphrase":
      let passphrase = try CollectionCommands.readPassphrase(arguments, console: console, creating: true)
      let secretd = try SecretdConnection(client: console.client())
      reply = try passphrase.withUnsafeBytes { (bytes) throws(CLIError) in
        try secretd.call(
          "AddUnlocker", .tuple([.string("passphrase"), .copyingBytes(bytes)]), replyType: "(u)")
      }
    case "tpm":
      guard !arguments.flag(CollectionCommands.passwordStdin.long) else {
        throw usage("a TPM unlocker takes no passphrase: leave out --password-stdin", of: "unlocker add")
      }
      let secretd = try SecretdConnection(client: console.client())
      reply = try secretd.call("AddUnlocker", .tuple([.string("tpm"), .bytes([])]), replyType: "(u)")
    case let other:
      throw usage("no unlocker of kind '\((other ?? "").visible)': passphrase or tpm", of: "unlocker add")
    }
    console.print("unlocker \(reply.child(0)?.uint32 ?? 0) added\n")
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
    let secretd = try SecretdConnection(client: console.client())
    let reply = try secretd.call("ListUnlockers", .tuple([]), replyType: "(a(us))")
    let unlockers = (reply.child(0)?.elements ?? []).map { entry in
      (number: entry.child(0)?.uint32 ?? 0, kind: entry.child(1)?.string ?? "")
    }
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
    let secretd = try SecretdConnection(client: console.client())
    _ = try secretd.call("RemoveUnlocker", .tuple([.uint32(value)]), replyType: "()")
    return .success
  }

  static let all = [add, list, remove]

  /// A usage error of `command`, which a command's own closure cannot name through its spec.
  private static func usage(_ message: String, of command: String) -> CLIError {
    .usage("\(message); see `secretctl \(command) --help`")
  }
}
