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
    let input = SecretBytes()
    guard input.read(from: console.input, until: endsWithBlankLine) else {
      throw .usage("cannot read the credential from stdin")
    }
    guard !input.contains(0) else {
      throw .usage("the credential git sent holds a NUL byte; nothing was done")
    }
    var credential = input.withUnsafeBytes { Credential(parsing: $0) }
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
    guard let item = try newestReadableItem(credential.attributes, client: client, where: isGitCredential) else {
      return
    }
    if let user = item.attributes["user"] { credential.username = user }
    credential.takeSecret(item.secret?.bytes ?? SecretBytes())
    // A value with a line break would add lines of its own to git's protocol (another
    // password=, quit=1): such a credential is not given to git at all.
    guard credential.fitsOnProtocolLines else {
      console.report(
        "the stored credential \(item.label) holds a newline, carriage return or NUL in its user or secret; "
          + "it is not given to git (replace it with `git credential reject` and a new login)")
      return
    }
    credential.answer().withUnsafeBytes { _ = console.write($0) }
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
    let value = SecretValue(bytes: credential.storedSecret(), contentType: "text/plain")
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
    let items = try service(client) { () throws(SecretError) in
      try client.search(attributes, includeSecrets: checksPassword)
    }
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

/// One credential as git describes it, with the secret parts in secret memory.
struct Credential {
  var `protocol`: String?
  var host: String?
  var port: UInt16?
  var path: String?
  var username: String?
  var password = SecretBytes()
  /// Whether git sent a `password=` line (possibly empty): `erase` then checks it.
  var passwordGiven = false
  var passwordExpiry: String?
  var oauthRefreshToken = SecretBytes()

  init(parsing input: UnsafeRawBufferPointer) {
    for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      if line.isEmpty { break }
      guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let key = String(decoding: line[..<equals], as: UTF8.self)
      var value = line[(equals + 1)...]
      if value.last == UInt8(ascii: "\r") { value = value.dropLast() }
      switch key {
      // The secret parts are copied into secret memory; the input they came from is the caller's.
      case "password":
        password = SecretBytes(copying: value)
        passwordGiven = true
      case "oauth_refresh_token": oauthRefreshToken = SecretBytes(copying: value)
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
  func storedSecret() -> SecretBytes {
    let secret = SecretBytes(copying: password)
    if let passwordExpiry { secret.append(contentsOf: "\npassword_expiry_utc=\(passwordExpiry)".utf8) }
    if !oauthRefreshToken.isEmpty {
      secret.append(contentsOf: "\noauth_refresh_token=".utf8)
      secret.append(contentsOf: oauthRefreshToken)
    }
    return secret
  }

  /// Reads a stored secret back: the first line is the password, later lines extra fields.
  mutating func takeSecret(_ secret: SecretBytes) {
    let lines = secret.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    password = lines.first.map { SecretBytes(copying: $0) } ?? SecretBytes()
    let expiryKey = Array("password_expiry_utc=".utf8)
    let tokenKey = Array("oauth_refresh_token=".utf8)
    // Matched as bytes: a String of the token's line would be a copy that is never wiped.
    for line in lines.dropFirst() {
      if line.starts(with: expiryKey) {
        passwordExpiry = String(decoding: line.dropFirst(expiryKey.count), as: UTF8.self)
      } else if line.starts(with: tokenKey) {
        oauthRefreshToken = SecretBytes(copying: line.dropFirst(tokenKey.count))
      }
    }
  }

  /// What `get` prints: the fields git asked for, as key=value lines.
  func answer() -> SecretBytes {
    let output = SecretBytes()
    if let username { output.append(contentsOf: "username=\(username)\n".utf8) }
    output.append(contentsOf: "password=".utf8)
    output.append(contentsOf: password)
    output.append(UInt8(ascii: "\n"))
    if let passwordExpiry { output.append(contentsOf: "password_expiry_utc=\(passwordExpiry)\n".utf8) }
    if !oauthRefreshToken.isEmpty {
      output.append(contentsOf: "oauth_refresh_token=".utf8)
      output.append(contentsOf: oauthRefreshToken)
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
}

/// The most recently modified unlocked item whose attributes include `attributes`, with its
/// secret; nil when none matches; an error when the only matches are locked.
func newestReadableItem(
  _ attributes: [String: String], in collection: CollectionID? = nil, client: SecretClient,
  where accepted: (SecretItem) -> Bool = { _ in true }
) throws(CLIError) -> SecretItem? {
  let items = try service(client) { () throws(SecretError) in
    try client.search(attributes, includeSecrets: true, in: collection)
  }.filter(accepted)
  let newest = items.filter { $0.secret != nil }.max { $0.modified < $1.modified }
  if let newest { return newest }
  if let locked = items.first(where: \.isLocked) { throw CLIError(SecretError.locked(path: locked.collectionPath)) }
  return nil
}
