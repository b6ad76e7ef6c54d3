// `bao://MOUNT/PATH#FIELD`: a field of a secret in OpenBao's KV v2 engine. Resolved by
// secretctl-bao, which secretctl hands the command to (see OpenBaoAccess.swift).

struct BaoReference: Hashable {
  static let scheme = "bao://"

  /// The reference as written, for messages (it never holds a secret).
  var text: String
  /// Where the KV v2 engine is mounted, such as `secret`.
  var mount: String
  /// The secret's path inside the mount, exactly as `bao kv get` takes it.
  var path: String
  /// The field whose text is the secret; `value` (what a SecretKey writes) unless given.
  var field: String

  static func isReference(_ text: some StringProtocol) -> Bool { text.hasPrefix(scheme) }

  init(_ text: String) throws(CLIError) {
    self.text = text
    guard Self.isReference(text) else { throw Self.malformed(text, "it does not start with \(Self.scheme)") }
    let rest = text.dropFirst(Self.scheme.count)
    let location = rest.prefix { $0 != "#" }
    let field = rest.dropFirst(location.count + 1)
    let parts = location.split(separator: "/", maxSplits: 1)
    guard parts.count == 2, !parts[1].isEmpty, !parts[1].hasSuffix("/") else {
      throw Self.malformed(
        text, "write bao://MOUNT/PATH or bao://MOUNT/PATH#FIELD, such as bao://secret/deploy/api#token")
    }
    guard location.count == rest.count || !field.isEmpty else {
      throw Self.malformed(text, "the field after # is empty")
    }
    mount = String(parts[0])
    path = String(parts[1])
    self.field = field.isEmpty ? "value" : String(field)
  }

  private static func malformed(_ text: String, _ why: String) -> CLIError {
    .usage("\(text) is not a secret reference: \(why)")
  }
}

/// A secret named by reference: in the Secret Service (`secret://`) or in OpenBao (`bao://`).
enum Reference: Hashable {
  case secret(SecretReference)
  case bao(BaoReference)

  static func isReference(_ text: some StringProtocol) -> Bool {
    SecretReference.isReference(text) || BaoReference.isReference(text)
  }

  init(_ text: String) throws(CLIError) {
    self = BaoReference.isReference(text) ? .bao(try BaoReference(text)) : .secret(try SecretReference(text))
  }

  var text: String {
    switch self {
    case .secret(let reference): reference.text
    case .bao(let reference): reference.text
    }
  }
}
