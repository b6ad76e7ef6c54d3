// search: every item whose attributes match, shown as secret-tool shows them, with the expiry
// as a date and the time left.
import CommandLineSyntax
import FoundationEssentials
import SecretClient
import SystemCalls

enum SearchCommand {
  static let spec = CommandSpec(
    "search", summary: "List items whose attributes match, with labels and attributes.",
    discussion: """
      Every ATTR=VALUE must match (no arguments: every item). Secrets are shown only with
      --show-secrets, and only for unlocked items. Labels and attributes are shown with control
      characters escaped (\\x1b, \\n), since anyone who can store an item chooses them; --json
      gives them exactly. An item that expires (secretd's --ttl) shows when, and the time left.
      On a terminal, a search that matches nothing says so.
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
    var items = try service(client) { () throws(SecretError) in
      try client.search(attributes, includeSecrets: showSecrets, in: collection)
    }
    items.sort { ($0.label, $0.path) < ($1.label, $1.path) }
    let now = WallClock.seconds
    if arguments.flag("json") {
      JSON.array(items.map { json($0, showSecrets: showSecrets) }).renderedBytes.withUnsafeBytes {
        _ = console.write($0)
      }
    } else {
      console.print(items.map { text($0, showSecrets: showSecrets, now: now) }.joined(separator: "\n"))
      if items.isEmpty, console.outputIsTerminal {
        let pattern = arguments.all("ATTR=VALUE").joined(separator: " ")
        console.report("no items match\(pattern.isEmpty ? "" : " " + pattern)\(collection.map { " in \($0)" } ?? "")")
      }
    }
    return items.isEmpty ? .notFound : .success
  }

  /// secret-tool's layout: the path in brackets, then `key = value` lines; what the store
  /// chose (label, attributes) with its control characters escaped.
  static func text(_ item: SecretItem, showSecrets: Bool, now: Int64) -> String {
    var lines = ["[\(item.path.visible)]", "label = \(item.label.visible)"]
    if showSecrets, let secret = item.secret {
      if let text = secret.text, text.visible == text {
        lines.append("secret = \(text)")
      } else {
        lines.append("secret.base64 = \(base64(secret.bytes))")
      }
    }
    lines.append("locked = \(item.isLocked ? "yes" : "no")")
    lines.append("created = \(iso8601(item.created))")
    lines.append("modified = \(iso8601(item.modified))")
    if let expiry = expiry(of: item) { lines.append("expires = \(describeExpiry(expiry, now: now))") }
    lines += item.attributes.sorted { $0.key < $1.key }.map { "attribute.\($0.key.visible) = \($0.value.visible)" }
    return lines.joined(separator: "\n") + "\n"
  }

  private static func json(_ item: SecretItem, showSecrets: Bool) -> JSON {
    var members: [(String, JSON)] = [
      ("path", .string(item.path)), ("label", .string(item.label)), ("collection", .string(item.collectionPath)),
      ("locked", .bool(item.isLocked)), ("created", .string(iso8601(item.created))),
      ("modified", .string(iso8601(item.modified))),
    ]
    if let expiry = expiry(of: item) {
      members.append(("expires", .string(iso8601(Date(timeIntervalSince1970: TimeInterval(expiry))))))
    }
    members.append(("attributes", .attributes(item.attributes)))
    if showSecrets {
      if let secret = item.secret, secret.isText {
        members.append(("secret", .secretText(secret.bytes)))
      } else if let secret = item.secret {
        members.append(("secretBase64", .secretBase64(secret.bytes)))
      } else {
        members.append(("secret", .null))
      }
    }
    return .object(members)
  }

  /// When secretd removes the item, in unix seconds: `xdg:expires`, or `expires-at`.
  static func expiry(of item: SecretItem) -> Int64? {
    (item.attributes[expiryAttribute] ?? item.attributes["expires-at"]).flatMap { Int64($0) }
  }

  /// `2026-11-30T01:34:44Z (in 1h 59m)`, or `(expired 5m ago)`.
  static func describeExpiry(_ expiry: Int64, now: Int64) -> String {
    let date = iso8601(Date(timeIntervalSince1970: TimeInterval(expiry)))
    let left = expiry - now
    return left >= 0 ? "\(date) (in \(spokenDuration(left)))" : "\(date) (expired \(spokenDuration(-left)) ago)"
  }

  /// `1h 59m`, `3d 4h`, `45s`: the largest unit, and the next one when it is not zero.
  static func spokenDuration(_ seconds: Int64) -> String {
    let units: [(size: Int64, name: String)] = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")]
    guard let first = units.firstIndex(where: { seconds >= $0.size }) else { return "0s" }
    var text = "\(seconds / units[first].size)\(units[first].name)"
    if first + 1 < units.count {
      let next = seconds % units[first].size / units[first + 1].size
      if next > 0 { text += " \(next)\(units[first + 1].name)" }
    }
    return text
  }
}
