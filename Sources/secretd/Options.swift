// Command-line options of secretd.
import SecretDaemon

struct Options {
  var address: String?
  var busName = "org.freedesktop.secrets"
  var replace = false
  var configuration = Configuration()

  enum Outcome {
    case run(Options)
    case exit(status: Int32, message: String)
  }

  static let version = "secretd 0.1.0"

  static let usage = """
    Usage: secretd [OPTION...]

    A freedesktop Secret Service provider that keeps secrets in memory only.
    Runs in the foreground; logs lifecycle events to stderr; exits on SIGTERM or SIGINT.

      --address ADDR             serve the bus at ADDR instead of the session bus
      --bus-name NAME            own NAME instead of org.freedesktop.secrets
      --replace                  take the name over from the provider that owns it
      --max-secret-size BYTES    largest secret accepted (default 1048576)
      --max-attributes N         most attributes per item (default 64)
      --max-attribute-length N   longest attribute name, value or label in bytes (default 4096)
      --max-items N              most items in total (default 100000)
      --max-sessions N           most open transfer sessions per client (default 1024)
      --default-ttl SECONDS      expire items that carry no xdg:expires/expires-at attribute
                                 after SECONDS (default: never)
      --help                     show this help
      --version                  show the version
    """

  static func parse(_ arguments: [String]) -> Outcome {
    // The flags that set one of the daemon's limits, each a positive number.
    let limitFlags: [String: WritableKeyPath<Limits, Int>] = [
      "--max-secret-size": \.maxSecretSize,
      "--max-attributes": \.maxAttributes,
      "--max-attribute-length": \.maxAttributeLength,
      "--max-items": \.maxItems,
      "--max-sessions": \.maxSessionsPerClient,
    ]
    var options = Options()
    var index = 0
    func fail(_ message: String) -> Outcome {
      .exit(status: 2, message: "secretd: \(message)\nTry 'secretd --help'.")
    }
    while index < arguments.count {
      var argument = arguments[index]
      var inlineValue: String?
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        inlineValue = String(argument[argument.index(after: equals)...])
        argument = String(argument[..<equals])
      }
      index += 1
      func value() -> String? {
        if let inlineValue { return inlineValue }
        guard index < arguments.count else { return nil }
        index += 1
        return arguments[index - 1]
      }
      func number() -> Int? {
        guard let text = value(), let number = Int(text), number > 0 else { return nil }
        return number
      }
      if let limit = limitFlags[argument] {
        guard let n = number() else { return fail("\(argument) needs a positive number") }
        options.configuration.limits[keyPath: limit] = n
        continue
      }
      switch argument {
      case "--help", "-h": return .exit(status: 0, message: usage)
      case "--version": return .exit(status: 0, message: version)
      case "--replace", "-r": options.replace = true
      case "--address":
        guard let address = value(), !address.isEmpty else { return fail("--address needs a bus address") }
        options.address = address
      case "--bus-name":
        guard let name = value(), !name.isEmpty else { return fail("--bus-name needs a name") }
        options.busName = name
      case "--default-ttl":
        guard let n = number() else { return fail("\(argument) needs a positive number of seconds") }
        options.configuration.defaultTTL = UInt64(n)
      default:
        return fail("unknown option '\(argument)'")
      }
    }
    return .run(options)
  }
}
