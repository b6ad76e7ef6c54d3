// get, set, delete, search: one item or a few, found by service and account or by attributes.
import CommandLineSyntax
import SecretClient
import SystemCalls

enum ItemCommands {
  static let get = CommandSpec(
    "get", summary: "Print the secret stored for SERVICE and ACCOUNT.",
    discussion: """
      The secret is written as stored, byte for byte; a newline follows only when stdout is a
      terminal. With --json: service, account, content type and the secret (as text, or as
      base64 in "secretBase64" when it is not UTF-8).
      Exit status: 0 printed, 1 no such secret, 3 Secret Service error.
      """,
    arguments: [Common.service, Common.account], options: [Common.collectionFilter, Common.json, Store.option]
  ) { arguments, console throws(CLIError) in
    let (service, account) = try serviceAndAccount(arguments)
    let found: SecretValue?
    let store = try Store(arguments)
    switch store {
    case .bao:
      try store.refuse(["collection"], in: arguments)
      found = try console.openBaoAccess().value(service: service, account: account)
        .map { SecretValue(bytes: $0, contentType: "text/plain") }
    case .secretService:
      let client = console.client()
      let collection = arguments.option("collection").map(CollectionID.init)
      found = try SecretCLI.service { () throws(SecretError) in
        try client.read(service: service, account: account, in: collection)
      }
    }
    guard var value = found else {
      let option = store == .bao ? " --store bao" : ""
      throw .notFound(
        "no secret for \(describe(service, account)); store one with `secretctl set\(option) \(words(service, account))`"
      )
    }
    defer { wipe(&value.bytes) }
    try show(value, service: service, account: account, json: arguments.flag("json"), console: console)
    return .success
  }

  static let set = CommandSpec(
    "set", summary: "Store a secret for SERVICE and ACCOUNT, read from stdin or asked for.",
    discussion: """
      When stdin is piped, the secret is every byte of it, exactly as given (--trim drops one
      trailing newline). On a terminal it is asked for twice, without echo. Never on the command
      line. An existing secret for the same service and account is replaced.
      --ttl needs secretd, which removes the item when it expires; other providers keep items
      forever, so there --ttl is refused and nothing is stored.
      Exit status: 0 stored, 2 usage error, 3 Secret Service error.
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
      Store.option,
    ]
  ) { arguments, console throws(CLIError) in
    let (service, account) = try serviceAndAccount(arguments)
    if try Store(arguments) == .bao {
      try Store.bao.refuse(["collection", "ttl", "label"], in: arguments)
      // Handed over (when it must be) before anything is read from stdin.
      let openBao = try console.openBaoAccess()
      var secret = try readSecret(arguments, console: console, for: describe(service, account))
      defer { wipe(&secret) }
      try openBao.store(secret, service: service, account: account)
      return .success
    }
    var attributes = SecretClient.attributes(service: service, account: account)
    let client = console.client()
    if let ttl = arguments.option("ttl") {
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
      attributes[expiryAttribute] = String(expiry)
    }
    var value = SecretValue(
      bytes: try readSecret(arguments, console: console, for: describe(service, account)),
      contentType: "application/octet-stream")
    defer { wipe(&value.bytes) }
    if value.isText { value.contentType = "text/plain" }
    let collection = CollectionID(arguments.option("collection") ?? "default")
    let label = arguments.option("label")
    try SecretCLI.service { () throws(SecretError) in
      // Exactly: gnome-keyring would otherwise replace any item whose attributes include these,
      // so `set svc` would overwrite the secret of `svc alice`. Written first, so that a failed
      // write never costs the secret that was there.
      try client.write(value, attributes: attributes, label: label, in: collection, exactly: true)
      try removeSuperseded(by: attributes, in: collection, client: client)
    }
    return .success
  }

  static let delete = CommandSpec(
    "delete", summary: "Delete the secret stored for SERVICE and ACCOUNT.",
    discussion: """
      Deletes the one item for SERVICE (and ACCOUNT). When several items match (several
      accounts of SERVICE, or items with more attributes such as a SecretKey's backups), nothing
      is deleted unless --all is given; `secretctl search` lists them.
      Exit status: 0 deleted, 1 no such secret, 2 usage error, 3 Secret Service error.
      """,
    arguments: [Common.service, Common.account],
    options: [
      Common.collectionFilter,
      OptionSpec("all", help: "Delete every matching item, whatever its account or other attributes."),
      Store.option,
    ]
  ) { arguments, console throws(CLIError) in
    let (service, account) = try serviceAndAccount(arguments)
    if try Store(arguments) == .bao {
      try Store.bao.refuse(["collection", "all"], in: arguments)
      guard try console.openBaoAccess().delete(service: service, account: account) else {
        throw .notFound("no secret for \(describe(service, account)) in OpenBao; nothing was deleted")
      }
      return .success
    }
    let client = console.client()
    let collection = arguments.option("collection").map(CollectionID.init)
    let attributes = SecretClient.attributes(service: service, account: account)
    let matching = try SecretCLI.service { () throws(SecretError) in try client.search(attributes, in: collection) }
    if matching.count > 1, !arguments.flag("all") {
      throw .usage(
        "\(matching.count) items match \(describe(service, account)); "
          + "\(account == nil ? "name the ACCOUNT, or " : "")pass --all to delete them all (`secretctl search` lists them)"
      )
    }
    let deleted = try SecretCLI.service { () throws(SecretError) in try client.delete(attributes, in: collection) }
    guard deleted else { throw .notFound("no secret for \(describe(service, account)); nothing was deleted") }
    return .success
  }

  static let search = CommandSpec(
    "search", summary: "List items whose attributes match, with labels and attributes.",
    discussion: """
      Every ATTR=VALUE must match (no arguments: every item). Secrets are shown only with
      --show-secrets, and only for unlocked items.
      Exit status: 0 found, 1 nothing matched, 2 usage error, 3 Secret Service error.
      """,
    arguments: [
      ArgumentSpec(
        "ATTR=VALUE", "An attribute the items must have, such as service=github.com.", optional: true, variadic: true)
    ],
    options: [Common.collectionFilter, OptionSpec("show-secrets", help: "Also print the secrets."), Common.json]
  ) { arguments, console throws(CLIError) in
    var attributes: [String: String] = [:]
    for word in arguments.all("ATTR=VALUE") {
      guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
        throw .usage("'\(word)' is not ATTR=VALUE; see `secretctl search --help`")
      }
      attributes[String(word[..<equals])] = String(word[word.index(after: equals)...])
    }
    let client = console.client()
    let collection = arguments.option("collection").map(CollectionID.init)
    let showSecrets = arguments.flag("show-secrets")
    var items = try SecretCLI.service { () throws(SecretError) in
      try client.search(attributes, includeSecrets: showSecrets, in: collection)
    }
    defer { for index in items.indices { items[index].secret?.bytes.withUnsafeMutableBytes { Memory.wipe($0) } } }
    items.sort { ($0.label, $0.path) < ($1.label, $1.path) }
    if arguments.flag("json") {
      console.print(JSON.array(items.map { json($0, showSecrets: showSecrets) }).rendered)
    } else {
      console.print(items.map { text($0, showSecrets: showSecrets) }.joined(separator: "\n"))
    }
    return items.isEmpty ? .notFound : .success
  }
}

/// The attribute secretd reads an item's expiry from, in unix seconds.
let expiryAttribute = "xdg:expires"

extension ItemCommands {
  static func serviceAndAccount(_ arguments: ParsedArguments) throws(CLIError) -> (String, String?) {
    guard let service = arguments.argument(Common.service.name), !service.isEmpty else {
      throw .usage("SERVICE must not be empty")
    }
    return (service, arguments.argument(Common.account.name))
  }

  /// `service "s", account "a"`, for messages.
  static func describe(_ service: String, _ account: String?) -> String {
    "service \"\(service)\"" + (account.map { ", account \"\($0)\"" } ?? "")
  }

  /// `s a`, quoted for a shell where needed, for commands suggested in messages.
  static func words(_ service: String, _ account: String?) -> String {
    ([service] + (account.map { [$0] } ?? [])).map(shellQuoted).joined(separator: " ")
  }

  static func shellQuoted(_ word: String) -> String {
    let plain = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "@%+=:,./-_".contains($0)) }
    return plain && !word.isEmpty ? word : "'" + word.replacingEvery("'", with: "'\\''") + "'"
  }

  /// The secret to store: asked for twice on a terminal, else every byte of stdin (one trailing
  /// newline dropped with --trim). The caller wipes it.
  private static func readSecret(_ arguments: ParsedArguments, console: Console, for what: String) throws(CLIError)
    -> [UInt8]
  {
    var secret = SecretBuffer()
    if console.inputIsTerminal {
      try askTwice(for: what, into: &secret)
    } else {
      guard secret.read(from: console.input) else { throw .usage("cannot read the secret from stdin") }
      if arguments.flag("trim") { secret.trimOneNewline() }
    }
    return Array(secret.bytes)
  }

  /// Prints a secret as `get` does: raw (a newline only on a terminal), or as JSON.
  private static func show(
    _ value: SecretValue, service: String, account: String?, json: Bool, console: Console
  ) throws(CLIError) {
    if json {
      var members: [(String, JSON)] = [
        ("service", .string(service)), ("account", .string(account)), ("contentType", .string(value.contentType)),
      ]
      if let text = value.text {
        members.append(("secret", .string(text)))
      } else {
        members.append(("secretBase64", .string(base64(value.bytes))))
      }
      console.print(JSON.object(members).rendered)
    } else {
      let written = value.bytes.withUnsafeBytes { console.write($0) }
      guard written else { throw .service("cannot write the secret to stdout") }
      if console.outputIsTerminal { console.print("\n") }
    }
  }

  /// Asks for the secret twice without echo and keeps it only when both entries agree.
  private static func askTwice(for what: String, into secret: inout SecretBuffer) throws(CLIError) {
    try Terminal.readSecret(prompt: "Secret for \(what): ", into: &secret)
    var again = SecretBuffer()
    try Terminal.readSecret(prompt: "Again: ", into: &again)
    guard secret == again else { throw .usage("the two entries differ; nothing was stored") }
  }

  /// After a write with `attributes`, removes the other items of the collection for the same
  /// service and account that differ only in their expiry, so that `set` replaces rather than
  /// adds (a `--ttl` item and a plain one would otherwise both be found, and either could win).
  private static func removeSuperseded(
    by attributes: [String: String], in collection: CollectionID, client: SecretClient
  ) throws(SecretError) {
    func withoutSchema(_ attributes: [String: String]) -> [String: String] {
      attributes.filter { $0.key != "xdg:schema" }
    }
    func identity(_ attributes: [String: String]) -> [String: String] {
      withoutSchema(attributes).filter { $0.key != expiryAttribute }
    }
    let written = withoutSchema(attributes)
    let wanted = identity(attributes)
    for item in try client.search(wanted, in: collection)
    where withoutSchema(item.attributes) != written && identity(item.attributes) == wanted {
      try client.delete(item.attributes, in: collection, exactly: true)
    }
  }

  /// secret-tool's layout: the path in brackets, then `key = value` lines.
  private static func text(_ item: SecretItem, showSecrets: Bool) -> String {
    var lines = ["[\(item.path)]", "label = \(item.label)"]
    if showSecrets, let secret = item.secret {
      if let text = secret.text {
        lines.append("secret = \(text)")
      } else {
        lines.append("secret.base64 = \(base64(secret.bytes))")
      }
    }
    lines.append("locked = \(item.isLocked ? "yes" : "no")")
    lines.append("created = \(iso8601(item.created))")
    lines.append("modified = \(iso8601(item.modified))")
    lines += item.attributes.sorted { $0.key < $1.key }.map { "attribute.\($0.key) = \($0.value)" }
    return lines.joined(separator: "\n") + "\n"
  }

  private static func json(_ item: SecretItem, showSecrets: Bool) -> JSON {
    var members: [(String, JSON)] = [
      ("path", .string(item.path)), ("label", .string(item.label)), ("collection", .string(item.collectionPath)),
      ("locked", .bool(item.isLocked)), ("created", .string(iso8601(item.created))),
      ("modified", .string(iso8601(item.modified))), ("attributes", .attributes(item.attributes)),
    ]
    if showSecrets {
      if let secret = item.secret, let text = secret.text {
        members.append(("secret", .string(text)))
      } else if let secret = item.secret {
        members.append(("secretBase64", .string(base64(secret.bytes))))
      } else {
        members.append(("secret", .null))
      }
    }
    return .object(members)
  }
}
