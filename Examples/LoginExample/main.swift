// A small login tool: the session token is a secret (in the `session` collection, so it is gone
// when the login session ends), the preferences are a JSON file. Run it against secretd:
//   make run                      # in one shell
//   swift run login-example login alice
//   swift run login-example status
//   swift run login-example logout
import Foundation
import Secrets

struct SessionToken: Codable, Sendable {
  var user: String
  var token: String
  var expires: Date
}

struct Preferences: Codable, Sendable {
  var lastUser: String?
  var logins = 0
}

extension SharedKey where Self == SecretKey<SessionToken?>.Default {
  static var sessionToken: Self {
    Self[.secret(service: "com.example.login", account: "session", collection: .session), default: nil]
  }
}

extension SharedKey where Self == FileStorageKey<Preferences>.Default {
  static var preferences: Self {
    let config =
      ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].map { URL(filePath: $0) }
      ?? URL.homeDirectory.appending(path: ".config")
    return Self[.fileStorage(config.appending(path: "login-example/preferences.json")), default: Preferences()]
  }
}

func run(_ arguments: [String]) async throws -> Int32 {
  @Shared(.sessionToken) var session
  @Shared(.preferences) var preferences

  if let error = $session.loadError {
    print("error: \(error)")
    return 3
  }
  switch arguments.first {
  case "login" where arguments.count == 2:
    let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    $session.withLock { $0 = SessionToken(user: arguments[1], token: token, expires: .now + 3600) }
    try await $session.save()
    $preferences.withLock {
      $0.lastUser = arguments[1]
      $0.logins += 1
    }
    try await $preferences.save()
    print("logged in as \(arguments[1]) for an hour")
  case "status":
    if let session, session.expires > .now {
      print("logged in as \(session.user)")
    } else {
      print("not logged in (last user: \(preferences.lastUser ?? "none"), \(preferences.logins) logins)")
    }
  case "logout":
    $session.withLock { $0 = nil }
    try await $session.save()
    print("logged out")
  default:
    print("usage: login-example login USER | status | logout")
    return 2
  }
  return 0
}

do {
  exit(try await run(Array(CommandLine.arguments.dropFirst())))
} catch {
  print("error: \(error)")
  exit(3)
}
