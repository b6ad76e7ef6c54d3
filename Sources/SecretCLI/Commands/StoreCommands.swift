// What `status` says of secretd's store (where it lives, how much of its budget it uses,
// whether it survives a crash), and `store discard-rejected`, for the stores secretd refused.
import CommandLineSyntax
import SecretClient

enum StoreCommands {
  static let discardRejected = CommandSpec(
    "store discard-rejected", summary: "Let go of the stores secretd refused to serve at start.",
    discussion: """
      When the store the service manager kept for secretd does not check out (damaged, or of a
      layout this secretd cannot read), secretd starts with an empty store and keeps the old one
      aside; `secretctl status` lists it with the reason. This discards it for good.
      Exit status: 0 done, 3 Secret Service error (or the provider is not secretd).
      """
  ) { _, console throws(CLIError) in
    let client = console.client()
    try service { () throws(SecretError) in try client.discardRejectedStores() }
    return .success
  }

  /// `status`'s lines about secretd's store.
  static func text(_ store: ProviderStore) -> String {
    var text = "store: \(memory(store.memory)); \(store.isKept ? keptText : notKeptText)\n"
    text += "memory budget: \(bytes(store.used)) used, \(bytes(max(0, store.budget - store.used))) free"
    text += " of \(bytes(store.budget)) (--max-memory)\n"
    if let state = store.sealedState, state != "off" { text += "persistent collection: \(sealedText(state))\n" }
    for reason in store.rejected {
      text += "refused store, kept: \(reason.visible) (`secretctl store discard-rejected` lets it go)\n"
    }
    return text
  }

  static func json(_ store: ProviderStore) -> JSON {
    .object([
      ("memory", .string(store.memory)), ("kept", .bool(store.isKept)), ("budget", .number(store.budget)),
      ("used", .number(store.used)), ("free", .number(max(0, store.budget - store.used))),
      ("rejected", .array(store.rejected.map { .string($0) })),
      ("persistent", store.sealedState.map { .string($0) } ?? .null),
    ])
  }

  private static let keptText = "kept by the service manager (a crash, a kill or a restart loses nothing)"
  private static let notKeptText = "in this process only (no service manager keeps it: a restart empties it)"

  /// The first word is the state itself, for scripts; what to do follows.
  private static func sealedText(_ state: String) -> String {
    switch state {
    case "new": "new (login, sealed on disk: `secretctl unlock` sets its passphrase)"
    case "locked": "locked (login, sealed on disk: `secretctl unlock` opens it)"
    case "unlocked": "unlocked (login, sealed on disk)"
    default: state.visible
    }
  }

  private static func memory(_ kind: String) -> String {
    switch kind {
    case "memfd_secret": "memfd_secret (out of the kernel's direct map, never swapped)"
    case "locked memfd": "a locked memfd (memfd_secret is refused here)"
    case "unlocked memfd": "an unlocked memfd, which may be swapped (--allow-unlocked-memory)"
    default: kind.visible
    }
  }

  private static func bytes(_ count: Int) -> String {
    if count >= 1 << 20 {
      let mebibytes = (Double(count) / Double(1 << 20) * 10).rounded() / 10
      return mebibytes == mebibytes.rounded() ? "\(Int(mebibytes)) MiB" : "\(mebibytes) MiB"
    }
    return count >= 1 << 10 ? "\(count >> 10) KiB" : "\(count) bytes"
  }
}
