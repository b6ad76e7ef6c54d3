public import SecretClient

/// The exit statuses of secretctl, as its help and README document them.
public enum ExitStatus {
  public static let success: Int32 = 0
  public static let notFound: Int32 = 1
  public static let usage: Int32 = 2
  public static let serviceError: Int32 = 3
  /// `exec`: the command was found but could not be run (as env(1)).
  public static let cannotExecute: Int32 = 126
  /// `exec`: the command was not found (as env(1)).
  public static let commandNotFound: Int32 = 127
}

/// A failure that ends the command: an exit status and one line for stderr saying what to do.
/// Messages name services, accounts and collections, never a secret.
public struct CLIError: Error, Sendable, Hashable, CustomStringConvertible {
  public var status: Int32
  public var message: String

  public init(status: Int32, _ message: String) {
    self.status = status
    self.message = message
  }

  public var description: String { message }

  public static func usage(_ message: String) -> CLIError { CLIError(status: ExitStatus.usage, message) }
  public static func notFound(_ message: String) -> CLIError { CLIError(status: ExitStatus.notFound, message) }
  public static func service(_ message: String) -> CLIError { CLIError(status: ExitStatus.serviceError, message) }

  /// How a client error reads on the command line, and which status it ends with.
  public init(_ error: SecretError) {
    switch error {
    case .serviceUnavailable(let busName):
      self = .service(
        "no Secret Service provider owns \(busName) on the session bus; start one with `secretd &`, "
          + "or `systemctl --user enable --now secretd`, or run gnome-keyring")
    case .busUnavailable(let reason):
      self = .service(
        "no D-Bus session bus (\(reason)); log in to a desktop session or start one with "
          + "`dbus-run-session -- $SHELL`, then start `secretd &`")
    case .invalidArgument:
      self = .usage(Self.oneLine(error.description))
    case .noSuchObject:
      self = .notFound(Self.oneLine(error.description))
    case .locked, .promptDismissed, .dbus:
      self = .service(Self.oneLine(error.description))
    }
  }

  /// Error text from elsewhere (D-Bus messages) may span lines; stderr gets exactly one.
  static func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).joined(separator: " ")
  }
}

/// Runs a client call, turning its error into the command line's.
func service<T>(_ body: () throws(SecretError) -> T) throws(CLIError) -> T {
  do {
    return try body()
  } catch {
    throw CLIError(error)
  }
}
