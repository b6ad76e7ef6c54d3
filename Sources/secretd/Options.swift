// Command-line options of secretd. One table (`Options.flags`, with the limits from
// SecretDaemon's `Limit`) drives both parsing and `--help`.
import SecretDaemon
import SystemCalls

struct Options {
  var address: String?
  var busName = "org.freedesktop.secrets"
  var replace = false
  var allowReplacement = false
  var configuration = Configuration()

  enum Outcome {
    case run(Options)
    case exit(status: ExitStatus, message: String)
  }

  static let version = "secretd 0.1.0"
  /// The status of a command line secretd does not accept.
  static let usageError = ExitStatus(rawValue: 2)

  /// One option: its name, the placeholder of its value (nil for a switch), its help, and what
  /// it does to the options (nil, or what is wrong with the value).
  struct Flag: Sendable {
    let name: String
    let value: String?
    let help: String
    let apply: @Sendable (inout Options, String) -> String?
  }

  static let flags: [Flag] = [
    Flag(name: "--address", value: "ADDR", help: "serve the bus at ADDR instead of the session bus") {
      $0.address = $1
      return $1.isEmpty ? "--address needs a bus address" : nil
    },
    Flag(name: "--bus-name", value: "NAME", help: "own NAME instead of org.freedesktop.secrets") {
      $0.busName = $1
      return $1.isEmpty ? "--bus-name needs a name" : nil
    },
    Flag(name: "--replace", value: nil, help: "take the name from a provider that allows it (see --allow-replacement)") {
      options, _ in
      options.replace = true
      return nil
    },
    Flag(
      name: "--allow-replacement", value: nil,
      help: "let a later `secretd --replace` take the name over (and end this one with its items)"
    ) { options, _ in
      options.allowReplacement = true
      return nil
    },
    Flag(
      name: "--allow-unlocked-memory", value: nil,
      help: "keep secrets even when memory cannot be locked (they may then be swapped to disk)"
    ) { options, _ in
      options.configuration.allowUnlockedMemory = true
      return nil
    },
    Flag(
      name: "--default-ttl", value: "SECONDS",
      help: "expire items that carry no xdg:expires/expires-at attribute after SECONDS (default: never)"
    ) {
      guard let seconds = UInt64($1), seconds > 0 else { return "--default-ttl needs a positive number of seconds" }
      $0.configuration.defaultTTL = seconds
      return nil
    },
  ] + Limit.allCases.map(limitFlag)

  /// A flag that sets one of the daemon's limits; sizes take K, M or G.
  static func limitFlag(_ limit: Limit) -> Flag {
    let defaults = Limits()
    let current = defaults[keyPath: limit.keyPath]
    let shown = limit == .memory ? "from RLIMIT_MEMLOCK, here \(size(current))" : limit.isSize ? size(current) : "\(current)"
    return Flag(name: limit.flag, value: limit.isSize ? "BYTES" : "N", help: "\(limit.help) (default \(shown))") {
      guard let number = limit.isSize ? parseSize($1) : Int($1), number > 0 else {
        return "\(limit.flag) needs a positive \(limit.isSize ? "size, such as 4096 or 64M" : "number")"
      }
      $0.configuration.limits[keyPath: limit.keyPath] = number
      return nil
    }
  }

  static var usage: String {
    var text = """
      Usage: secretd [OPTION...]

      A freedesktop Secret Service provider that keeps secrets in memory only. Serves only the
      user it runs as. Runs in the foreground; logs lifecycle events to stderr; exits 0 on
      SIGTERM or SIGINT, 1 when it loses its name or the bus.


      """
    let rows = flags.map { ($0.name + ($0.value.map { " " + $0 } ?? ""), $0.help) } + [
      ("--help", "show this help"), ("--version", "show the version"),
    ]
    let width = (rows.map(\.0.count).max() ?? 0) + 4
    for (left, right) in rows {
      var lines = [""]
      for word in right.split(separator: " ") {
        if !lines[lines.count - 1].isEmpty, width + lines[lines.count - 1].count + 1 + word.count > 100 { lines.append("") }
        lines[lines.count - 1] += (lines[lines.count - 1].isEmpty ? "" : " ") + word
      }
      text += "  " + left + String(repeating: " ", count: width - 2 - left.count) + lines[0] + "\n"
      for line in lines.dropFirst() { text += String(repeating: " ", count: width) + line + "\n" }
    }
    return text
  }

  static func parse(_ arguments: [String]) -> Outcome {
    var options = Options()
    var words = arguments[...]
    func fail(_ message: String) -> Outcome {
      .exit(status: usageError, message: "secretd: \(message)\nTry 'secretd --help'.")
    }
    while let word = words.popFirst() {
      var name = word
      var inline: String?
      if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
        name = String(word[..<equals])
        inline = String(word[word.index(after: equals)...])
      }
      switch name {
      case "--help", "-h": return .exit(status: .success, message: usage)
      case "--version": return .exit(status: .success, message: version)
      case "-r": name = "--replace"
      default: break
      }
      guard let flag = flags.first(where: { $0.name == name }) else { return fail("unknown option '\(name)'") }
      let value: String
      if flag.value == nil {
        guard inline == nil else { return fail("\(name) takes no value") }
        value = ""
      } else if let given = inline ?? words.popFirst() {
        value = given
      } else {
        return fail("\(name) needs a value (\(flag.value ?? ""))")
      }
      if let problem = flag.apply(&options, value) { return fail(problem) }
    }
    return .run(options)
  }

  /// `4096`, `64K`, `8M`, `1G`.
  static func parseSize(_ text: String) -> Int? {
    let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
    if let last = text.last?.uppercased().first, let unit = units[last] {
      return Int(text.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
    }
    return Int(text)
  }

  /// `8 MiB`, `3.5 MiB`, `4096 bytes`.
  static func size(_ bytes: Int) -> String {
    if bytes >= 1 << 20 {
      let mebibytes = Double(bytes) / Double(1 << 20)
      return mebibytes == mebibytes.rounded() ? "\(Int(mebibytes)) MiB" : "\((mebibytes * 10).rounded() / 10) MiB"
    }
    return bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
  }
}
