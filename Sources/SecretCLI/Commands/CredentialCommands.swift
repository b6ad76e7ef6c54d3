// credential set, get, list, delete, drop-in: the secrets systemd units load from secretd with
// `LoadCredential=ID:%t/secretd/credentials`. A credential is an item of the default collection
// with the attribute `credential=ID`, and `unit=UNIT` when it is for that unit only, labelled
// `systemd credential ID` (` for UNIT`), of content type text/plain. secretd gives unit U the
// credential C from the item for C and U, else from the one for C with no unit.
import CommandLineSyntax
import SecretClient

enum CredentialCommands {
  static let id = ArgumentSpec(
    "ID", "The credential's name, as the unit's LoadCredential= line gives it.", liveCompletions: "credentials")
  static let unit = OptionSpec(
    "unit", value: "UNIT",
    help: "For this unit only (a full unit name, such as app.service); without it, for every unit that asks.")

  /// The largest credential secretd hands a unit: it copies one into the locked memory it keeps
  /// beside the store (about 600 KiB at the default 8 MiB RLIMIT_MEMLOCK), which the requests
  /// it answers at once share. systemd's own bound is 1 MiB.
  static let largestServed = 64 << 10

  static let contract = """
    A unit loads credential ID with `LoadCredential=ID:%t/secretd/credentials` (see
    `secretctl credential drop-in`) and reads it from $CREDENTIALS_DIRECTORY/ID. secretd gives
    unit U the credential stored for ID with --unit U, else the one stored for ID without
    --unit. Credentials live in the default collection.
    """

  static let set = CommandSpec(
    "credential set", summary: "Store a credential that systemd units load from secretd.",
    discussion: """
      \(contract)
      The secret is read as `set` reads it: every byte of piped stdin (--trim drops one
      trailing newline), or asked for twice on a terminal; empty input stores nothing unless
      --allow-empty. At most \(largestServed >> 10) KiB, which secretd can hand a unit. It replaces the
      credential stored for the same ID and unit only.
      Exit status: 0 stored, 2 usage error (or nothing on stdin), 3 Secret Service error.
      """,
    arguments: [id],
    options: [unit, OptionSpec("trim", help: "Drop one trailing newline from piped input."), Common.allowEmpty]
  ) { arguments, console throws(CLIError) in
    let (id, unit) = try credential(arguments)
    let secret = try ItemCommands.readSecret(arguments, console: console, for: describe(id, unit))
    guard secret.count <= largestServed else {
      throw .usage(
        "a credential of \(secret.count) bytes is more than secretd hands a unit (at most \(largestServed), "
          + "copied into its locked memory); nothing was stored")
    }
    let client = console.client()
    try service(client) { () throws(SecretError) in
      try client.write(
        SecretValue(bytes: secret, contentType: "text/plain"), attributes: attributes(id, unit),
        label: "systemd credential \(id)" + (unit.map { " for \($0)" } ?? ""), in: .default, exactly: true)
    }
    return .success
  }

  static let get = CommandSpec(
    "credential get", summary: "Print the credential secretd would give a unit.",
    discussion: """
      \(contract)
      With --unit, prints what secretd gives that unit: its own credential, else the shared
      one. Without it, the credential shared by every unit. Written as stored; a newline follows
      only on a terminal.
      Exit status: 0 printed, 1 no such credential, 3 Secret Service error.
      """,
    arguments: [id], options: [unit]
  ) { arguments, console throws(CLIError) in
    let (id, unit) = try credential(arguments)
    let client = console.client()
    let candidates = unit.map { [attributes(id, $0), attributes(id, nil)] } ?? [attributes(id, nil)]
    for address in candidates {
      let found = try service(client) { () throws(SecretError) in try client.readNamed(address, in: .default) }
      guard let value = found?.value else { continue }
      try console.writeSecret(value.bytes)
      return .success
    }
    let what =
      "credential \"\(id)\"" + (unit.map { " for \($0) (nor one shared by every unit)" } ?? " shared by every unit")
    throw .notFound(
      "no \(what); store one with `secretctl credential set \(unitWords(unit))\(ItemCommands.shellQuoted(id))`")
  }

  static let list = CommandSpec(
    "credential list", summary: "List the credentials units can load: unit, ID and label, never secrets.",
    discussion: """
      \(contract)
      One line per credential: the unit it is for (`*` for every unit), its ID and its label.
      Exit status: 0 listed (even none), 3 Secret Service error.
      """,
    options: [Common.json]
  ) { arguments, console throws(CLIError) in
    let client = console.client()
    let credentials = try stored(client)
    if arguments.flag("json") {
      console.print(
        JSON.array(
          credentials.map { item in
            .object([
              ("unit", .string(item.attributes["unit"])), ("id", .string(item.attributes["credential"])),
              ("label", .string(item.label)),
            ])
          }
        ).rendered)
      return .success
    }
    let rows = credentials.map {
      [($0.attributes["unit"] ?? "*").visible, ($0.attributes["credential"] ?? "").visible, $0.label.visible]
    }
    let widths = (0..<2).map { column in ([["UNIT", "ID"]] + rows).map { $0[column].count }.max() ?? 0 }
    var text = ""
    for row in [["UNIT", "ID", "LABEL"]] + rows {
      text += row[0].padded(to: widths[0]) + "  " + row[1].padded(to: widths[1]) + "  " + row[2] + "\n"
    }
    console.print(text)
    return .success
  }

  static let delete = CommandSpec(
    "credential delete", summary: "Delete a credential.",
    discussion: """
      \(contract)
      Deletes the credential stored for ID with --unit UNIT, or the shared one without --unit;
      never the other.
      Exit status: 0 deleted, 1 no such credential, 3 Secret Service error.
      """,
    arguments: [id], options: [unit]
  ) { arguments, console throws(CLIError) in
    let (id, unit) = try credential(arguments)
    let client = console.client()
    let address = attributes(id, unit)
    let named = try service(client) { () throws(SecretError) in try client.search(address, in: .default) }
      .filter { SecretClient.isNamed($0.attributes, by: address) }
    guard !named.isEmpty else {
      throw ItemCommands.nothingNamed(
        address, describe(id, unit), in: .default, client: client, consequence: "; nothing was deleted")
    }
    if let locked = named.first(where: \.isLocked) { throw CLIError(SecretError.locked(path: locked.collectionPath)) }
    for item in named {
      _ = try service(client) { () throws(SecretError) in try client.deleteItem(at: item.path) }
    }
    return .success
  }

  static let dropIn = CommandSpec(
    "credential drop-in", summary: "Print the LoadCredential= lines, as a drop-in, for a unit to load credentials.",
    discussion: """
      Prints a drop-in for UNIT (a user unit) that loads each ID from secretd and starts
      secretd's credential socket first, with where to save it as comments. The service then
      reads each credential from $CREDENTIALS_DIRECTORY/ID (mode 0400, only that unit sees it).
      Example: secretctl credential drop-in app.service api-token
      """,
    arguments: [
      ArgumentSpec("UNIT", "The unit that loads the credentials, such as app.service."),
      ArgumentSpec("ID", "A credential it loads.", variadic: true, liveCompletions: "credentials"),
    ]
  ) { arguments, console throws(CLIError) in
    guard let unit = arguments.argument("UNIT") else { throw .usage("missing UNIT; see `secretctl credential --help`") }
    try validate(unit: unit)
    let ids = arguments.all("ID")
    for id in ids { try validate(id: id) }
    var text = """
      # ~/.config/systemd/user/\(unit).d/secretd-credentials.conf
      # Save it there (or paste it into `systemctl --user edit \(unit)`), then run
      #   systemctl --user daemon-reload && systemctl --user restart \(unit)
      # For a credential secretd does not hold, systemd writes an empty file (it does not fail the
      # start): each ExecStartPre= fails the start then (%d is $CREDENTIALS_DIRECTORY).
      [Unit]
      Wants=secretd-credentials.socket
      After=secretd-credentials.socket

      [Service]

      """
    for id in ids {
      text += "LoadCredential=\(id):%t/secretd/credentials\nExecStartPre=/usr/bin/test -s %d/\(id)\n"
    }
    console.print(text)
    return .success
  }

  static let all = [set, get, list, delete, dropIn]
}

extension CredentialCommands {
  private static func credential(_ arguments: ParsedArguments) throws(CLIError) -> (String, String?) {
    guard let id = arguments.argument(id.name) else { throw .usage("missing ID; see `secretctl credential --help`") }
    try validate(id: id)
    let unit = arguments.option(unit.long)
    if let unit { try validate(unit: unit) }
    return (id, unit)
  }

  static func attributes(_ id: String, _ unit: String?) -> [String: String] {
    var attributes = ["credential": id]
    attributes["unit"] = unit
    return attributes
  }

  private static func describe(_ id: String, _ unit: String?) -> String {
    "credential \"\(id)\"" + (unit.map { " for \($0)" } ?? " shared by every unit")
  }

  private static func unitWords(_ unit: String?) -> String {
    unit.map { "--unit \(ItemCommands.shellQuoted($0)) " } ?? ""
  }

  /// The credentials of the default collection (the ones secretd serves), by ID, then unit.
  static func stored(_ client: SecretClient) throws(CLIError) -> [SecretItem] {
    let path = try service(client) { () throws(SecretError) in try client.path(of: .default) }
    return try service(client) { () throws(SecretError) in try client.search([:], in: .path(path)) }
      .filter { $0.attributes["credential"] != nil }
      .sorted {
        ($0.attributes["credential"] ?? "", $0.attributes["unit"] ?? "") < (
          $1.attributes["credential"] ?? "", $1.attributes["unit"] ?? ""
        )
      }
  }

  /// A name systemd accepts for a credential and that fits `LoadCredential=ID:PATH`: a file
  /// name (no `/`, not `.` or `..`, at most 255 bytes), without `:` or control characters.
  static func validate(id: String) throws(CLIError) {
    guard !id.isEmpty, id != ".", id != "..", id.utf8.count <= 255, !id.contains("/"), !id.contains(":"),
      id.visible == id, !id.contains(" ")
    else {
      throw .usage(
        "'\(id)' is not a credential ID: use a file name without /, :, spaces or control characters, such as "
          + "api-token; see `secretctl credential --help`")
    }
  }

  /// A full unit name, as systemd writes it: `name.type`, of letters, digits and `:-_.\@`.
  static func validate(unit: String) throws(CLIError) {
    let allowed = unit.unicodeScalars.allSatisfy {
      ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        || ":-_.\\@".unicodeScalars.contains($0)
    }
    guard allowed, let dot = unit.lastIndex(of: "."), dot != unit.startIndex, unit.index(after: dot) != unit.endIndex,
      unit.utf8.count <= 255
    else {
      throw .usage("'\(unit)' is not a full unit name such as app.service; see `secretctl credential --help`")
    }
  }
}

extension String {
  fileprivate func padded(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
