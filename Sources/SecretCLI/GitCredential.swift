// git-credential: git's credential helper protocol, storing items the way git's own libsecret
// helper (git/contrib/credential/libsecret) does, so either helper finds what the other stored.
import CommandLineSyntax
import SecretClient
import SystemCalls

enum GitCredential {
  static let spec = CommandSpec(
    "git-credential", summary: "Act as a git credential helper (get, store, erase).",
    discussion: """
      Reads key=value lines on stdin up to a blank line, as git sends them. Items are stored
      as git-credential-libsecret stores them (attributes user, protocol, server, port,
      object; schema org.gnome.keyring.NetworkPassword, the one every version of git's helper
      finds), so the two helpers share credentials.
      `get` gives the newest of git's credentials that match (another program's item with
      the same attributes is never given). `erase` removes only what git's own helper (git
      2.43 and later) would: the matching credentials, and when git sends the password it
      rejected, only those holding that password, so a stale one never takes the fresh one.
      `get` with nothing found prints nothing and exits 0; other actions are ignored.
      Use it: git config --global credential.helper '!secretctl git-credential'
      """,
    arguments: [
      ArgumentSpec("ACTION", "get, store or erase, as git gives it.", completions: ["get", "store", "erase"])
    ]
  ) { arguments, console throws(CLIError) in
    let action = arguments.argument("ACTION") ?? ""
    // git's protocol: a helper silently ignores an action it does not know.
    guard ["get", "store", "erase"].contains(action) else { return .success }
    var input = SecretBuffer()
    guard input.read(from: console.input, until: endsWithBlankLine) else {
      throw .usage("cannot read the credential from stdin")
    }
    guard !input.bytes.contains(0) else {
      throw .usage("the credential git sent holds a NUL byte; nothing was done")
    }
    var credential = Credential(parsing: input.bytes)
    defer { credential.wipe() }
    let client = console.client()
    switch action {
    case "get": try get(&credential, client: client, console: console)
    case "store": try store(credential, client: client)
    default: try erase(credential, client: client)
    }
    return .success
  }

  /// The schema name stored as `xdg:schema`. git's helper searched only under this name up to
  /// git 2.42 (Debian 12 ships 2.39); later ones store `org.git.Password` but search ignoring
  /// the name. Items under this name are found by both.
  static let schemaName = "org.gnome.keyring.NetworkPassword"

  /// The schema names git's libsecret helpers store credentials under. Items of other programs
  /// (other schemas, or none) that happen to carry the same attributes are neither given to git
  /// nor erased.
  static let gitSchemaNames: Set<String> = [schemaName, "org.git.Password"]

  static func isGitCredential(_ item: SecretItem) -> Bool {
    item.attributes["xdg:schema"].map(gitSchemaNames.contains) ?? false
  }

  private static func get(_ credential: inout Credential, client: SecretClient, console: Console) throws(CLIError) {
    guard credential.protocol != nil, credential.host != nil || credential.path != nil else { return }
    // Searched without the schema name, as git's helper does (SECRET_SCHEMA_DONT_MATCH_NAME);
    // the items of git's two schemas are kept.
    guard var item = try newestReadableItem(credential.attributes, client: client, where: isGitCredential) else {
      return
    }
    // No copy of the secret is kept beside the item's, so the wipe below reaches its only buffer.
    defer { item.secret?.bytes.withUnsafeMutableBytes { Memory.wipe($0) } }
    if let user = item.attributes["user"] { credential.username = user }
    credential.takeSecret(item.secret?.bytes ?? [])
    // A value with a line break would add lines of its own to git's protocol (another
    // password=, quit=1): such a credential is not given to git at all.
    guard credential.fitsOnProtocolLines else {
      console.report(
        "the stored credential \(item.label) holds a newline, carriage return or NUL in its user or secret; "
          + "it is not given to git (replace it with `git credential reject` and a new login)")
      return
    }
    var output = credential.answer()
    defer { wipe(&output) }
    output.withUnsafeBytes { _ = console.write($0) }
  }

  private static func store(_ credential: Credential, client: SecretClient) throws(CLIError) {
    // As git's helper: without these there is no key to find it by, or nothing to keep.
    guard credential.protocol != nil, credential.host != nil || credential.path != nil,
      credential.username != nil, !credential.password.isEmpty
    else { return }
    guard credential.fitsOnProtocolLines else {
      throw .usage("the credential holds a carriage return in a value; it was not stored")
    }
    var attributes = credential.attributes
    attributes["xdg:schema"] = schemaName
    var value = SecretValue(bytes: credential.storedSecret(), contentType: "text/plain")
    defer { wipe(&value.bytes) }
    try service(client) { () throws(SecretError) in
      try client.write(value, attributes: attributes, label: credential.label, in: .default)
    }
  }

  /// Removes what git's libsecret helper (2.43 and later) would, and no more: every item whose
  /// attributes include the credential's, and when git gives the password it rejected, only
  /// items holding that password, so that rejecting a stale password never takes the fresh one
  /// stored since. Only git's credentials (its schemas) are removed; another program's item
  /// with the same attributes stays.
  private static func erase(_ credential: Credential, client: SecretClient) throws(CLIError) {
    // As git's helper: an empty pattern would match everything, and is far too easy to send.
    let attributes = credential.attributes
    guard
      attributes["protocol"] != nil || attributes["server"] != nil || attributes["object"] != nil
        || attributes["user"] != nil
    else { return }
    let checksPassword = credential.passwordGiven
    var items = try service(client) { () throws(SecretError) in
      try client.search(attributes, includeSecrets: checksPassword)
    }
    defer { for index in items.indices { items[index].secret?.bytes.withUnsafeMutableBytes { Memory.wipe($0) } } }
    for item in items where isGitCredential(item) {
      if checksPassword {
        // git compares the first line: the stored secret's later lines are extra fields.
        guard let secret = item.secret,
          secret.bytes.prefix(while: { $0 != UInt8(ascii: "\n") }).elementsEqual(credential.password)
        else { continue }
      }
      _ = try service(client) { () throws(SecretError) in try client.deleteItem(at: item.path) }
    }
  }

  /// The protocol ends the request at a blank line, or at the end of input.
  private static func endsWithBlankLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let newline = UInt8(ascii: "\n")
    if bytes.first == newline { return true }
    return zip(bytes, bytes.dropFirst()).contains { $0 == newline && $1 == newline }
  }
}

/// One credential as git describes it, with the secret parts kept as bytes we can wipe.
struct Credential {
  var `protocol`: String?
  var host: String?
  var port: UInt16?
  var path: String?
  var username: String?
  var password: [UInt8] = []
  /// Whether git sent a `password=` line (possibly empty): `erase` then checks it.
  var passwordGiven = false
  var passwordExpiry: String?
  var oauthRefreshToken: [UInt8] = []

  init(parsing input: UnsafeRawBufferPointer) {
    for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      if line.isEmpty { break }
      guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let key = String(decoding: line[..<equals], as: UTF8.self)
      var value = line[(equals + 1)...]
      if value.last == UInt8(ascii: "\r") { value = value.dropLast() }
      switch key {
      // The secret parts stay bytes; the input they came from is wiped by its owner.
      case "password":
        password = Array(value)
        passwordGiven = true
      case "oauth_refresh_token": oauthRefreshToken = Array(value)
      default:
        let text = String(decoding: value, as: UTF8.self)
        switch key {
        case "protocol": self.protocol = text
        case "host": (host, port) = Self.splitPort(text)
        case "path": path = text
        case "username": username = text
        case "password_expiry_utc": passwordExpiry = text
        default: break  // Later versions of git may send keys we do not know; ignore them.
        }
      }
    }
  }

  /// git sends `host=example.com:8080`; the port is an attribute of its own.
  static func splitPort(_ host: String) -> (String, UInt16?) {
    guard let colon = host.lastIndex(of: ":") else { return (host, nil) }
    let digits = host[host.index(after: colon)...]
    guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let port = UInt16(digits), port > 0 else { return (host, nil) }
    return (String(host[..<colon]), port)
  }

  /// The attributes git's libsecret helper uses, only those present.
  var attributes: [String: String] {
    var attributes: [String: String] = [:]
    attributes["user"] = username
    attributes["protocol"] = self.protocol
    attributes["server"] = host
    attributes["port"] = port.map(String.init)
    attributes["object"] = path
    return attributes
  }

  /// `Git: https://example.com/` or `Git: https://example.com:8080/path`, as git's helper labels.
  var label: String {
    let authority = (host ?? "") + (port.map { ":\($0)" } ?? "")
    return "Git: \(self.protocol ?? "")://\(authority)/\(path ?? "")"
  }

  /// The password, then the extra fields on lines of their own, as git's helper stores them.
  func storedSecret() -> [UInt8] {
    var secret: [UInt8] = []
    secret.reserveCapacity(password.count + oauthRefreshToken.count + 64 + (passwordExpiry?.utf8.count ?? 0))
    secret += password
    if let passwordExpiry { secret += "\npassword_expiry_utc=\(passwordExpiry)".utf8 }
    if !oauthRefreshToken.isEmpty {
      secret += "\noauth_refresh_token=".utf8
      secret += oauthRefreshToken
    }
    return secret
  }

  /// Reads a stored secret back: the first line is the password, later lines extra fields.
  mutating func takeSecret(_ secret: [UInt8]) {
    let lines = secret.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    password = Array(lines.first ?? [])
    let expiryKey = Array("password_expiry_utc=".utf8)
    let tokenKey = Array("oauth_refresh_token=".utf8)
    // Matched as bytes: a String of the token's line would be a copy that is never wiped.
    for line in lines.dropFirst() {
      if line.starts(with: expiryKey) {
        passwordExpiry = String(decoding: line.dropFirst(expiryKey.count), as: UTF8.self)
      } else if line.starts(with: tokenKey) {
        oauthRefreshToken = Array(line.dropFirst(tokenKey.count))
      }
    }
  }

  /// What `get` prints: the fields git asked for, as key=value lines.
  func answer() -> [UInt8] {
    var output: [UInt8] = []
    // Reserved up front so that growing never leaves a copy of the password in freed memory.
    output.reserveCapacity(
      64 + (username?.utf8.count ?? 0) + password.count + oauthRefreshToken.count + (passwordExpiry?.utf8.count ?? 0))
    // Appended piece by piece: `a + password + b` would make temporary arrays holding it.
    if let username { output += "username=\(username)\n".utf8 }
    output += "password=".utf8
    output += password
    output.append(UInt8(ascii: "\n"))
    if let passwordExpiry { output += "password_expiry_utc=\(passwordExpiry)\n".utf8 }
    if !oauthRefreshToken.isEmpty {
      output += "oauth_refresh_token=".utf8
      output += oauthRefreshToken
      output.append(UInt8(ascii: "\n"))
    }
    return output
  }

  /// Whether every value can be given on one line of git's protocol: no newline, carriage
  /// return or NUL.
  var fitsOnProtocolLines: Bool {
    let breaks: [UInt8] = [UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0]
    let texts = [self.protocol, host, path, username, passwordExpiry].compactMap { $0 }
    return texts.allSatisfy { !$0.utf8.contains(where: breaks.contains) }
      && !password.contains(where: breaks.contains) && !oauthRefreshToken.contains(where: breaks.contains)
  }

  mutating func wipe() {
    SecretCLI.wipe(&password)
    SecretCLI.wipe(&oauthRefreshToken)
  }
}

/// The most recently modified unlocked item whose attributes include `attributes`, with its
/// secret (the caller wipes it); nil when none matches; an error when the only matches are
/// locked. The secrets of the other matches are wiped.
func newestReadableItem(
  _ attributes: [String: String], in collection: CollectionID? = nil, client: SecretClient,
  where accepted: (SecretItem) -> Bool = { _ in true }
) throws(CLIError) -> SecretItem? {
  var items = try service(client) { () throws(SecretError) in
    try client.search(attributes, includeSecrets: true, in: collection)
  }
  for index in items.indices where !accepted(items[index]) {
    items[index].secret?.bytes.withUnsafeMutableBytes { Memory.wipe($0) }
  }
  items.removeAll { !accepted($0) }
  let newest = items.indices.filter { items[$0].secret != nil }.max { items[$0].modified < items[$1].modified }
  for index in items.indices where index != newest {
    items[index].secret?.bytes.withUnsafeMutableBytes { Memory.wipe($0) }
  }
  if let newest { return items[newest] }
  if let locked = items.first(where: \.isLocked) { throw CLIError(SecretError.locked(path: locked.collectionPath)) }
  return nil
}
