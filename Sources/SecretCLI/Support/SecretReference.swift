// `secret://SERVICE/ACCOUNT?collection=NAME&attr.KEY=VALUE`: a secret named in a file or an
// environment variable, resolved at the last moment by `read`, `run` and `inject`.
import SecretClient
import SystemCalls

struct SecretReference: Hashable {
  static let scheme = "secret://"

  /// The reference as written, for messages (it never holds a secret).
  var text: String
  var service: String
  var account: String?
  var collection: CollectionID?
  /// Attributes beyond service and account, from `attr.KEY=VALUE` parameters.
  var otherAttributes: [String: String] = [:]

  /// Whether `text` is written as a reference (what `run` resolves).
  static func isReference(_ text: some StringProtocol) -> Bool { text.hasPrefix(scheme) }

  /// Parses a reference; parts are percent-decoded (`%2F` for a slash inside a part).
  init(_ text: String) throws(CLIError) {
    self.text = text
    guard Self.isReference(text) else { throw Self.malformed(text, "it does not start with \(Self.scheme)") }
    let rest = text.dropFirst(Self.scheme.count)
    let pathEnd = rest.firstIndex(of: "?") ?? rest.endIndex
    let parts = rest[..<pathEnd].split(separator: "/", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let service = Self.decoded(parts[0]), !service.isEmpty else {
      throw Self.malformed(text, "write secret://SERVICE or secret://SERVICE/ACCOUNT (%2F for a / inside a part)")
    }
    self.service = service
    if parts.count == 2 {
      guard let account = Self.decoded(parts[1]), !account.isEmpty else {
        throw Self.malformed(text, "the account is empty or badly percent-encoded")
      }
      self.account = account
    }
    guard pathEnd < rest.endIndex else { return }
    for parameter in rest[rest.index(after: pathEnd)...].split(separator: "&") {
      try apply(parameter)
    }
  }

  private mutating func apply(_ parameter: Substring) throws(CLIError) {
    let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
    guard pair.count == 2, let name = Self.decoded(pair[0]), let value = Self.decoded(pair[1]) else {
      throw Self.malformed(text, "\(parameter) is not NAME=VALUE")
    }
    if name == "collection" {
      collection = CollectionID(value)
    } else if name.hasPrefix("attr."), name.count > 5 {
      otherAttributes[String(name.dropFirst(5))] = value
    } else {
      throw Self.malformed(text, "unknown parameter \(name) (collection= or attr.KEY= are understood)")
    }
  }

  private static func malformed(_ text: String, _ why: String) -> CLIError {
    .usage("\(text) is not a secret reference: \(why)")
  }

  /// Percent-decodes `part`; nil when an escape is not two hex digits or the result not UTF-8.
  static func decoded(_ part: Substring) -> String? {
    var bytes: [UInt8] = []
    var index = part.utf8.startIndex
    while index < part.utf8.endIndex {
      let byte = part.utf8[index]
      index = part.utf8.index(after: index)
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      let digits = part.utf8[index...].prefix(2)
      guard digits.count == 2, digits.allSatisfy(\.isHexDigit),
        let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(value)
      index = part.utf8.index(index, offsetBy: 2)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  /// The attributes the reference names: service, account when given, and every `attr.`.
  var address: [String: String] {
    var attributes = otherAttributes
    attributes["service"] = service
    attributes["account"] = account
    return attributes
  }

  /// The secret of the item the reference names: the one whose attributes are exactly its
  /// address (`secret://SERVICE` is the secret with no account, never one of the service's
  /// accounts). None: status 1, naming the reference and `purpose`, listing the items with
  /// more attributes, and saying `consequence`.
  func resolve(with client: SecretClient, for purpose: String = "", _ consequence: String = "") throws(CLIError)
    -> SecretValue
  {
    let address = address
    let found = try SecretCLI.service(client) { () throws(SecretError) in
      try client.readNamed(address, in: collection)?.value
    }
    guard let found else {
      throw ItemCommands.nothingNamed(
        address, text + purpose, in: collection, client: client, consequence: consequence)
    }
    return found
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
      || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
  }
}
