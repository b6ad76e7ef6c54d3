import SecretClient
package import SystemCalls

/// The exit statuses of secretctl, as its help and README document them (0 is `.success`).
extension ExitStatus {
  static let notFound = ExitStatus(rawValue: 1)
  static let usage = ExitStatus(rawValue: 2)
  static let serviceError = ExitStatus(rawValue: 3)
  /// `exec`: the command was found but could not be run (as env(1)).
  static let cannotExecute = ExitStatus(rawValue: 126)
  /// `exec`: the command was not found (as env(1)).
  static let commandNotFound = ExitStatus(rawValue: 127)
}

/// A failure that ends the command: an exit status and one line for stderr saying what to do.
/// Messages name services, accounts and collections, never a secret.
package struct CLIError: Error, Sendable, Hashable, CustomStringConvertible {
  package var status: ExitStatus
  package var message: String
  /// Set when the command needs OpenBao: secretctl then hands it to secretctl-bao.
  package var openBaoHandOff: OpenBaoHandOff?

  package init(status: ExitStatus, _ message: String) {
    self.status = status
    self.message = message
  }

  package var description: String { message }

  package static func usage(_ message: String) -> CLIError { CLIError(status: .usage, message) }
  package static func notFound(_ message: String) -> CLIError { CLIError(status: .notFound, message) }
  package static func service(_ message: String) -> CLIError { CLIError(status: .serviceError, message) }

  /// How a client error reads on the command line, and which status it ends with.
  init(_ error: SecretError) {
    switch error {
    case .serviceUnavailable(let busName):
      self = .service(
        "no Secret Service provider owns \(busName) on the session bus; `secretctl setup` makes secretd "
          + "yours (it then starts with your first client), or start gnome-keyring")
    case .busUnavailable(let reason):
      self = .service(
        "no D-Bus session bus (\(reason)); without a desktop session, `eval \"$(secretd --agent)\"` "
          + "starts a bus and secretd for this shell (after `make run`, paste the export line it printed)")
    case .invalidArgument:
      self = .usage(Self.oneLine(error.description))
    case .noSuchObject(path: "alias default"):
      self = .noDefaultCollection(nil)
    case .noSuchObject:
      self = .notFound(Self.oneLine(error.description))
    case .locked, .promptDismissed, .dbus:
      self = .service(Self.oneLine(error.description))
    case .providerOfAnotherUser(let provider):
      self = .service(
        "\(provider.busName) is owned by \(provider.ownerDescription), which runs as "
          + (provider.uid.map { "uid \($0)" } ?? "a user the bus does not tell")
          + ", not as you (uid \(UserID.effective)): no secret was sent to it or read from it. "
          + "Find out who started it (`ps -o user,pid,args -p \(provider.pid.map(String.init) ?? "PID")`), stop it, "
          + "then start your own provider (`secretctl setup`, or `eval \"$(secretd --agent)\"`)")
    case .plainTransferRefused(let busName):
      self = .service(
        "the provider of \(busName) offers only plain transfer, which sends secrets unencrypted over the bus; "
          + "nothing was sent or read. If you trust every process that can watch this bus, allow it with "
          + "`secretctl --allow-plain-transfer COMMAND …`")
    }
  }

  /// A provider with no collection behind the `default` alias: gnome-keyring before a login
  /// keyring exists. `provider` names it when known.
  static func noDefaultCollection(_ provider: ProviderInfo?) -> CLIError {
    let who = provider.map { "the Secret Service provider \($0.ownerDescription)" } ?? "the Secret Service provider"
    return .service(
      "\(who) has no default collection (gnome-keyring has none until a login keyring exists); "
        + "store in the session collection with `--collection session`, or create the login keyring "
        + "(log in to a desktop session, or start `gnome-keyring-daemon --unlock`, which reads its password on stdin)")
  }

  /// Error text from elsewhere (D-Bus messages) may span lines; stderr gets exactly one.
  static func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).joined(separator: " ")
  }
}

/// Runs a client call, turning its error into the command line's. With `client`, a provider
/// that has no default collection is named in the message.
func service<T>(_ client: SecretClient? = nil, _ body: () throws(SecretError) -> T) throws(CLIError) -> T {
  do {
    return try body()
  } catch .noSuchObject(path: "alias default") {
    throw .noDefaultCollection(client.flatMap { try? $0.provider() })
  } catch {
    throw CLIError(error)
  }
}
