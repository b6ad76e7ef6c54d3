// lock, unlock, status: the collections and who provides them.
import CommandLineSyntax
import SecretClient
import SystemCalls

enum CollectionCommands {
  static let collection = ArgumentSpec(
    "COLLECTION", "default (the default), session, or a collection's object path.", optional: true,
    completions: ["default", "session"])

  static let lock = CommandSpec(
    "lock", summary: "Lock a collection, so its secrets cannot be read until it is unlocked.",
    discussion: "Exit status: 0 locked, 1 no such collection, 3 Secret Service error.",
    arguments: [collection]
  ) { arguments, console throws(CLIError) in
    let target = CollectionID(arguments.argument(collection.name) ?? "default")
    let client = console.client()
    try service(client) { () throws(SecretError) in try client.lock(target) }
    return .success
  }

  static let passwordStdin = OptionSpec(
    "password-stdin", help: "Read secretd's passphrase from stdin (one trailing newline dropped), not the terminal.")

  static let unlock = CommandSpec(
    "unlock", summary: "Unlock a collection.",
    discussion: """
      Providers such as gnome-keyring ask for the keyring's password through a desktop prompt;
      without a desktop that prompt cannot be shown and unlock fails with status 3.
      secretd's persistent collection (secretd --persistent: login, the default) is unlocked
      here with its passphrase, asked on the terminal with echo off or read from stdin with
      --password-stdin; the first unlock sets the passphrase (asked twice on a terminal).
      Exit status: 0 unlocked, 1 no such collection, 2 passphrases differ, 3 Secret Service
      error (a wrong passphrase among them).
      """,
    arguments: [collection], options: [passwordStdin]
  ) { arguments, console throws(CLIError) in
    let name = arguments.argument(collection.name) ?? "default"
    let target = CollectionID(name)
    let client = console.client()
    let sealedState = try? client.providerStore()?.sealedState
    let namesSealed = ["default", "login", "/org/freedesktop/secrets/collection/login"].contains(name)
    if let state = sealedState, state == "new" || state == "locked", namesSealed {
      let passphrase = try readPassphrase(arguments, console: console, creating: state == "new")
      let created = try service(client) { () throws(SecretError) in try client.unlockSealed(passphrase: passphrase) }
      if created { try? console.error.writeAll("the persistent collection login now opens with this passphrase\n") }
      return .success
    }
    if arguments.flag(passwordStdin.long) && !(sealedState == "unlocked" && namesSealed) {
      throw .usage("--password-stdin is for secretd's persistent collection (secretd --persistent) alone")
    }
    try service(client) { () throws(SecretError) in try client.unlock(target) }
    return .success
  }

  /// A passphrase (secretd's, by default, or what `prompt` asks for), from stdin with
  /// --password-stdin, else asked on the terminal (twice when it is being set). Only ever in
  /// SecretBytes.
  static func readPassphrase(
    _ arguments: ParsedArguments, console: Console, creating: Bool, prompt: String? = nil
  ) throws(CLIError) -> SecretBytes {
    let passphrase = SecretBytes()
    if arguments.flag(passwordStdin.long) {
      guard passphrase.read(from: console.input, until: { $0.count > 64 * 1024 }), passphrase.count <= 64 * 1024 else {
        throw .usage("cannot read the passphrase from stdin (at most 64 KiB)")
      }
      passphrase.trimOneNewline()
    } else {
      let prompt =
        prompt ?? (creating ? "New passphrase for secretd's login collection: " : "Passphrase for secretd's login: ")
      try Terminal.readSecret(prompt: prompt, into: passphrase)
      if creating {
        let again = SecretBytes()
        try Terminal.readSecret(prompt: "Again: ", into: again)
        guard passphrase == again else { throw .usage("the two entries differ; nothing was done") }
      }
    }
    guard passphrase.count > 0 else { throw .usage("no passphrase given; nothing was done") }
    return passphrase
  }

  static let status = CommandSpec(
    "status", summary: "Show which provider serves secrets, and its collections.",
    discussion: """
      Names the bus name's owner, its process and the user it runs as, then each collection
      with its label, lock state and item count; `default` marks the collection the default
      alias points at. For secretd, the memory budget as far as it is known.
      Exit status: 0 a provider answers, 3 none does (the message says how to start secretd).
      """,
    options: [Common.json]
  ) { arguments, console throws(CLIError) in
    let client = console.client()
    let (provider, collections, defaultPath, store) = try service { () throws(SecretError) in
      let provider = try client.provider()
      let collections = try client.collections().sorted { $0.path < $1.path }
      // A provider may have no default alias yet (nothing stored); that is not an error here.
      let defaultPath = try? client.path(of: .default)
      return (provider, collections, defaultPath, try client.providerStore())
    }
    if arguments.flag("json") {
      console.print(json(provider, collections, defaultPath, store).rendered)
    } else {
      console.print(text(provider, collections, defaultPath, store))
    }
    return .success
  }

  private static func text(
    _ provider: ProviderInfo, _ collections: [CollectionInfo], _ defaultPath: String?, _ store: ProviderStore?
  ) -> String {
    var text = "provider: \(provider.busName) owned by \(provider.ownerDescription.visible)"
    text += provider.uid.map { " as uid \($0)\($0 == UserID.effective.rawValue ? " (you)" : "")" } ?? ""
    text += "\nexpiry (--ttl): \(provider.isSecretd ? "supported" : "not supported")\n"
    if let store { text += StoreCommands.text(store) }
    if defaultPath == nil {
      text += "default collection: none (gnome-keyring without a login keyring); store with `--collection session`\n"
    }
    text += "collections:\n"
    for collection in collections {
      let items = collection.itemCount == 1 ? "1 item" : "\(collection.itemCount) items"
      let marks =
        [collection.isLocked ? "locked" : "unlocked", items] + (collection.path == defaultPath ? ["default"] : [])
      text += "  \(collection.path.visible)  \"\(collection.label.visible)\"  \(marks.joined(separator: ", "))\n"
    }
    return text
  }

  private static func json(
    _ provider: ProviderInfo, _ collections: [CollectionInfo], _ defaultPath: String?, _ store: ProviderStore?
  ) -> JSON {
    .object([
      (
        "provider",
        .object([
          ("busName", .string(provider.busName)), ("uniqueName", .string(provider.uniqueName)),
          ("pid", provider.pid.map { .number(Int($0)) } ?? .null), ("executable", .string(provider.executable)),
          ("uid", provider.uid.map { .number(Int($0)) } ?? .null), ("supportsExpiry", .bool(provider.isSecretd)),
        ])
      ),
      ("store", store.map(StoreCommands.json) ?? .null),
      ("defaultCollection", .string(defaultPath)),
      (
        "collections",
        .array(
          collections.map {
            .object([
              ("path", .string($0.path)), ("label", .string($0.label)), ("locked", .bool($0.isLocked)),
              ("items", .number($0.itemCount)),
            ])
          })
      ),
    ])
  }
}
