// SERVICE [ACCOUNT]: the address of one item, read from the command line, shown in messages,
// and explained when it names nothing while other items match it.
import CommandLineSyntax
import SecretClient

extension ItemCommands {
  static func serviceAndAccount(_ arguments: ParsedArguments) throws(CLIError) -> (String, String?) {
    guard let service = arguments.argument(Common.service.name), !service.isEmpty else {
      throw .usage("SERVICE must not be empty")
    }
    return (service, arguments.argument(Common.account.name))
  }

  /// `service "s", account "a"` or `service "s" with no account`, for messages.
  static func describe(_ service: String, _ account: String?) -> String {
    "service \"\(service)\"" + (account.map { ", account \"\($0)\"" } ?? " with no account")
  }

  /// `s a`, quoted for a shell where needed, for commands suggested in messages.
  static func words(_ service: String, _ account: String?) -> String {
    ([service] + (account.map { [$0] } ?? [])).map(shellQuoted).joined(separator: " ")
  }

  static func shellQuoted(_ word: String) -> String {
    let plain = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "@%+=:,./-_".contains($0)) }
    return plain && !word.isEmpty ? word : "'" + word.replacingEvery("'", with: "'\\''") + "'"
  }

  /// The error for an address that names no item (status 1). Items whose attributes include the
  /// address but are not named by it (the service's accounts, items with more attributes) are
  /// listed, so that the user can name the one meant; none of them was touched.
  ///
  /// - Parameters:
  ///   - what: the address as the user wrote it, such as `service "s" with no account`.
  ///   - ifNoneMatch: what follows when nothing else matches either, such as `; store one with …`.
  ///   - consequence: what follows in every case, such as `; nothing was run`.
  static func nothingNamed(
    _ address: [String: String], _ what: String, in collection: CollectionID?, client: SecretClient,
    ifNoneMatch: String = "", consequence: String = ""
  ) -> CLIError {
    let others = ((try? client.search(address, in: collection)) ?? [])
      .filter { !SecretClient.isNamed($0.attributes, by: address) }
      .map { moreAttributes($0.attributes, than: address) }.sorted()
    guard !others.isEmpty else { return .notFound("no secret for \(what)\(ifNoneMatch)\(consequence)") }
    let listed = others.prefix(5).joined(separator: "; ") + (others.count > 5 ? "; and \(others.count - 5) more" : "")
    let count = others.count == 1 ? "1 item has" : "\(others.count) items have"
    return .notFound(
      "no secret for \(what)\(consequence); \(count) more attributes and \(others.count == 1 ? "was" : "were") "
        + "left alone: \(listed). Name the one you mean (`secretctl search` lists them)")
  }

  /// `account "alice", backup "1"`: what an item has beyond the address, shown safely. Its
  /// schema name and expiry are left out: they do not name it (`SecretClient.isNamed`).
  private static func moreAttributes(_ attributes: [String: String], than address: [String: String]) -> String {
    SecretClient.address(of: attributes).filter { address[$0.key] != $0.value }.sorted { $0.key < $1.key }
      .map { "\($0.key.visible) \"\($0.value.visible)\"" }.joined(separator: ", ")
  }
}
