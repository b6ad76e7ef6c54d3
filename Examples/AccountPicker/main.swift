// The accounts a keychain holds for a service, listed live: store or delete one from another
// shell (secretctl, secret-tool, any libsecret program) and the list is printed again.
//   make run                                     # in one shell
//   swift run account-picker github.com          # in another: prints the list, then each change
//   secretctl set github.com alice               # in a third: alice appears in the list
// With --once it prints the list and exits.
import Foundation
import Secrets

func render(_ accounts: [SecretItemInfo], service: String) -> String {
  guard !accounts.isEmpty else { return "no accounts for \(service)" }
  let lines = accounts.enumerated().map { index, account in
    let locked = account.isLocked ? " (locked)" : ""
    return "  \(index + 1). \(account.attributes["account"] ?? account.label)\(locked)"
  }
  return (["accounts for \(service):"] + lines).joined(separator: "\n")
}

/// Writes at once (not when a buffer fills), so each change is seen as it comes.
func show(_ text: String) {
  FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func pick(_ arguments: [String]) async -> Int32 {
  guard let service = arguments.first(where: { !$0.hasPrefix("-") }) else {
    FileHandle.standardError.write(Data("usage: account-picker SERVICE [--once]\n".utf8))
    return 2
  }
  @SharedReader(.secretItems(matching: ["service": service])) var accounts
  if let error = $accounts.loadError {
    FileHandle.standardError.write(Data("account-picker: \(error)\n".utf8))
    return 3
  }
  guard !arguments.contains("--once") else {
    show(render(accounts, service: service))
    return 0
  }
  // The stream starts with the current accounts, so no change can come between the two.
  for await change in $accounts.values {
    show(render(change, service: service))
  }
  return 0
}

exit(await pick(Array(CommandLine.arguments.dropFirst())))
