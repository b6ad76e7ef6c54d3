// get, set, delete: the one item an address (SERVICE [ACCOUNT]) names.
import CommandLineSyntax
import SecretAddress
import SecretClient
import SystemCalls

enum ItemCommands {
  /// How SERVICE and ACCOUNT name an item, said for `command`.
  static func addressHelp(_ command: String) -> String {
    """
    SERVICE and ACCOUNT name the one item stored with exactly those attributes (its schema and
    expiry aside; no account when ACCOUNT is not given): `secretctl \(command) github.com` is
    about the secret stored with no account, never one of github.com's accounts. When only items
    with more attributes match, nothing is read or changed and they are listed.
    """
  }

  static let get = CommandSpec(
    "get", summary: "Print the secret stored for SERVICE and ACCOUNT.",
    discussion: """
      \(addressHelp("get"))
      The secret is written as stored, byte for byte; a newline follows only when stdout is a
      terminal. With --json: service, account, content type and the secret (as text, or as
      base64 in "secretBase64" when it is not UTF-8).
      Exit status: 0 printed, 1 no such secret, 3 Secret Service error.
      """,
    arguments: [Common.service, Common.account], options: [Common.collectionFilter, Common.json, StoreChoice.option]
  ) { arguments, console throws(CLIError) in
    let (service, account) = try serviceAndAccount(arguments)
    var value: SecretValue
    let store = try StoreChoice(arguments)
    let suggestion = "; store one with `secretctl set\(store == .bao ? " --store bao" : "") \(words(service, account))`"
    switch store {
    case .bao:
      try store.refuse(["collection"], in: arguments)
      guard let bytes = try console.openBaoAccess().value(service: service, account: account) else {
        throw .notFound("no secret for \(describe(service, account))\(suggestion)")
      }
      value = SecretValue(bytes: bytes, contentType: "text/plain")
    case .secretService:
      let client = console.client()
      let collection = arguments.option("collection").map(CollectionID.init)
      let found = try SecretCLI.service(client) { () throws(SecretError) in
        try client.read(service: service, account: account, in: collection)
      }
      guard let found else {
        throw nothingNamed(
          SecretClient.attributes(service: service, account: account), describe(service, account), in: collection,
          client: client, ifNoneMatch: suggestion)
      }
      value = found
    }
    try show(value, service: service, account: account, json: arguments.flag("json"), console: console)
    return .success
  }

  static let set = CommandSpec(
    "set", summary: "Store a secret for SERVICE and ACCOUNT, read from stdin or asked for.",
    discussion: """
      When stdin is piped, the secret is every byte of it, exactly as given (--trim drops one
      trailing newline). On a terminal it is asked for twice, without echo. Never on the command
      line. Empty input stores nothing (exit 2) unless --allow-empty says an empty secret is
      meant. The secret SERVICE and ACCOUNT name is replaced, whether or not it expires; items
      with more attributes (other accounts of SERVICE) are left alone.
      --ttl needs secretd, which removes the item when it expires; other providers keep items
      forever, so there --ttl is refused and nothing is stored. Without --ttl the secret stored
      does not expire. A secret larger than the provider takes (secretd: --max-secret-size, 1 MiB
      by default) is refused before it is read whole.
      Exit status: 0 stored, 2 usage error (or nothing on stdin), 3 Secret Service error.
      """,
    arguments: [Common.service, Common.account],
    options: [
      OptionSpec("label", value: "TEXT", help: "The label keyring managers show (default: the attributes)."),
      OptionSpec(
        "collection", value: "NAME", completions: ["default", "session"],
        help: "Where to store: default, session, or a collection's object path (default: default)."),
      OptionSpec(
        "ttl", value: "DURATION", help: "Expire the secret after DURATION (90s, 15m, 2h, 1d, 1h30m); secretd only."),
      OptionSpec("trim", help: "Drop one trailing newline from piped input."),
      Common.allowEmpty,
      StoreChoice.option,
    ]
  ) { arguments, console throws(CLIError) in
    let (service, account) = try serviceAndAccount(arguments)
    if try StoreChoice(arguments) == .bao {
      try StoreChoice.bao.refuse(["collection", "ttl", "label"], in: arguments)
      // Handed over (when it must be) before anything is read from stdin.
      let openBao = try console.openBaoAccess()
      let secret = try readSecret(arguments, console: console, for: describe(service, account))
      try openBao.store(secret, service: service, account: account)
      return .success
    }
    var attributes = SecretClient.attributes(service: service, account: account)
    let client = console.client()
    if let ttl = arguments.option("ttl") {
      attributes[expiryAttribute] = try expiry(ttl, client: client)
    }
    var value = SecretValue(
      bytes: try readSecret(arguments, console: console, for: describe(service, account)),
      contentType: "application/octet-stream")
    if value.isText { value.contentType = "text/plain" }
    let collection = CollectionID(arguments.option("collection") ?? "default")
    let label = arguments.option("label")
    try SecretCLI.service(client) { () throws(SecretError) in
      // Exactly: gnome-keyring would otherwise replace any item whose attributes include these,
      // so `set svc` would overwrite the secret of `svc alice`. The item the address names is
      // replaced whatever its expiry, and takes this one (or none).
      try client.write(value, attributes: attributes, label: label, in: collection, exactly: true)
    }
    return .success
  }

  static let delete = CommandSpec(
    "delete", summary: "Delete the secret stored for SERVICE and ACCOUNT.",
    discussion: """
      \(addressHelp("delete"))
      Deletes that one item and nothing else. --all deletes every item whose attributes include
      SERVICE (and ACCOUNT): every account of SERVICE, and items with more attributes such as
      a SecretKey's backups. When several items are named alike (in several collections),
      nothing is deleted without --all or --collection.
      Exit status: 0 deleted, 1 no such secret, 2 usage error, 3 Secret Service error.
      """,
    arguments: [Common.service, Common.account],
    options: [
      Common.collectionFilter,
      OptionSpec("all", help: "Delete every matching item, whatever its account or other attributes."),
      StoreChoice.option,
    ]
  ) { arguments, console throws(CLIError) in
    let (service, account) = try serviceAndAccount(arguments)
    if try StoreChoice(arguments) == .bao {
      try StoreChoice.bao.refuse(["collection", "all"], in: arguments)
      guard try console.openBaoAccess().delete(service: service, account: account) else {
        throw .notFound("no secret for \(describe(service, account)) in OpenBao; nothing was deleted")
      }
      return .success
    }
    let client = console.client()
    let collection = arguments.option("collection").map(CollectionID.init)
    let address = SecretClient.attributes(service: service, account: account)
    let matching = try SecretCLI.service(client) { () throws(SecretError) in try client.search(address, in: collection)
    }
    let doomed = arguments.flag("all") ? matching : matching.filter { SecretClient.isNamed($0.attributes, by: address) }
    guard !doomed.isEmpty else {
      throw nothingNamed(
        address, describe(service, account), in: collection, client: client, consequence: "; nothing was deleted")
    }
    guard doomed.count == 1 || arguments.flag("all") else {
      let places = doomed.map(\.collectionPath.visible).sorted().joined(separator: ", ")
      throw .usage(
        "\(doomed.count) items are stored for \(describe(service, account)) (in \(places)); nothing was deleted: "
          + "pick one with --collection, or pass --all")
    }
    if let locked = doomed.first(where: \.isLocked) { throw CLIError(SecretError.locked(path: locked.collectionPath)) }
    for item in doomed {
      _ = try SecretCLI.service(client) { () throws(SecretError) in try client.deleteItem(at: item.path) }
    }
    return .success
  }
}

/// The attribute secretd reads an item's expiry from, in unix seconds.
let expiryAttribute = AddressRule.expiryAttribute

extension ItemCommands {
  /// The `xdg:expires` value for `--ttl`, once the provider is known to be secretd.
  private static func expiry(_ ttl: String, client: SecretClient) throws(CLIError) -> String {
    guard let seconds = parseDuration(ttl) else {
      throw .usage("--ttl \(ttl) is not a duration such as 90s, 15m, 2h or 1d; see `secretctl set --help`")
    }
    let provider = try SecretCLI.service { () throws(SecretError) in try client.provider() }
    guard provider.isSecretd else {
      throw .service(
        "--ttl needs secretd, which expires items; \(provider.executable ?? provider.uniqueName) keeps them forever, "
          + "so nothing was stored. Drop --ttl, or use secretd (`secretd --replace &`)")
    }
    let (expiry, overflow) = UInt64(max(0, WallClock.seconds)).addingReportingOverflow(seconds)
    guard !overflow else { throw .usage("--ttl \(ttl) is too long; see `secretctl set --help`") }
    return String(expiry)
  }

  /// The secret to store: asked for twice on a terminal, else every byte of stdin (one trailing
  /// newline dropped with --trim). Empty is refused unless --allow-empty.
  static func readSecret(_ arguments: ParsedArguments, console: Console, for what: String) throws(CLIError)
    -> SecretBytes
  {
    let secret = SecretBytes()
    if console.inputIsTerminal {
      try askTwice(for: what, into: secret)
      guard secret.count > 0 || arguments.flag(Common.allowEmpty.long) else {
        throw .usage("no secret entered; nothing was stored (--allow-empty stores an empty secret)")
      }
    } else {
      let largest = largestSecret(console)
      guard secret.read(from: console.input, until: { $0.count > largest }) else {
        throw .usage("cannot read the secret from stdin")
      }
      guard secret.count <= largest else {
        throw .usage(
          "the secret is larger than \(largest) bytes, the most the provider takes "
            + "(secretd's --max-secret-size); nothing was stored")
      }
      if arguments.flag("trim") { secret.trimOneNewline() }
      guard secret.count > 0 || arguments.flag(Common.allowEmpty.long) else {
        throw .usage("nothing on stdin; nothing was stored (--allow-empty stores an empty secret)")
      }
    }
    return secret
  }

  /// Prints a secret as `get` does: raw (a newline only on a terminal), or as JSON.
  private static func show(
    _ value: SecretValue, service: String, account: String?, json: Bool, console: Console
  ) throws(CLIError) {
    if json {
      var members: [(String, JSON)] = [
        ("service", .string(service)), ("account", .string(account)), ("contentType", .string(value.contentType)),
      ]
      members.append(value.isText ? ("secret", .secretText(value.bytes)) : ("secretBase64", .secretBase64(value.bytes)))
      let rendered = JSON.object(members).renderedBytes
      guard rendered.withUnsafeBytes({ console.write($0) }) else { throw .service("cannot write the secret to stdout") }
    } else {
      try console.writeSecret(value.bytes)
    }
  }

  /// The largest secret the provider takes: what secretd says; for another provider, a cap well
  /// under the largest message a bus carries (past it the bus closes the connection).
  static func largestSecret(_ console: Console) -> Int {
    ((try? console.client().providerStore()) ?? nil)?.maxSecretSize ?? (16 << 20)
  }

  /// Asks for the secret twice without echo and keeps it only when both entries agree.
  private static func askTwice(for what: String, into secret: SecretBytes) throws(CLIError) {
    try Terminal.readSecret(prompt: "Secret for \(what.visible): ", into: secret)
    let again = SecretBytes()
    try Terminal.readSecret(prompt: "Again: ", into: again)
    guard secret == again else { throw .usage("the two entries differ; nothing was stored") }
  }
}
