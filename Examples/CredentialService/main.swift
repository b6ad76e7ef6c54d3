// A service that gets its API token as a systemd credential, from secretd, with no D-Bus code:
// its unit (credential-service.service, beside this file) says
// `LoadCredential=api-token:%t/secretd/credentials`, and systemd puts the token in
// $CREDENTIALS_DIRECTORY/api-token before the service starts. It proves it read the token by
// its length, and never prints the token:
//   printf %s "$TOKEN" | secretctl credential set api-token
//   systemctl --user start credential-service
//   journalctl --user -u credential-service        # credential api-token: 40 bytes
// Exit status: 0 read, 1 no such credential, 2 usage, 3 unreadable or undecodable.
import Foundation
import Secrets

func run(_ arguments: [String]) -> Int32 {
  guard arguments.count <= 1 else {
    complain("usage: credential-service [NAME]   (NAME: the credential to read, api-token by default)")
    return 2
  }
  let name = arguments.first ?? "api-token"
  // Data: any bytes, counted as they are; a String would also be the file's bytes, as UTF-8.
  @SharedReader(.credential(name)) var token: Data?

  if let error = $token.loadError {
    complain("credential-service: \(error)")
    return 3
  }
  guard let token else {
    let unitLine = "LoadCredential=\(name):%t/secretd/credentials"
    if let folder = SharedEnvironment.current.credentialsDirectory {
      complain("credential-service: no credential \"\(name)\" in \(folder.path); add \(unitLine) to the unit")
    } else {
      complain(
        "credential-service: no credential \"\(name)\": CREDENTIALS_DIRECTORY is not set; start me from a unit "
          + "with \(unitLine)")
    }
    return 1
  }
  print("credential \(name): \(token.count) bytes")
  return 0
}

func complain(_ message: String) {
  FileHandle.standardError.write(Data((message + "\n").utf8))
}

exit(run(Array(CommandLine.arguments.dropFirst())))
