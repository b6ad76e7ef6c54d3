// Command-line options of secretd. One table (`Options.flags`, with the limits from
// SecretDaemon's `Limit`) drives parsing (the package's one parser, CommandLineSyntax) and
// `--help`.
import CommandLineSyntax
import SecretDaemon
import SystemCalls

struct Options {
  var address: String?
  var busName = "org.freedesktop.secrets"
  var replace = false
  var allowReplacement = false
  var persistent = false
  var dataFolder: String?
  var tcti: String?
  var configuration = Configuration()

  enum Outcome {
    case run(Options)
    case exit(status: ExitStatus, message: String)
    /// `secretd run [OPTION…] -- COMMAND…`: the command, and the options for its secretd.
    case runCommand([String], secretdOptions: [String])
    /// `secretd --agent [-s|-c|--fish] [--kill] [OPTION…]`.
    case agent(Agent.Shell, kill: Bool, secretdOptions: [String])
  }

  /// The words `--agent` takes beside secretd's options, ssh-agent's among them.
  static let agentWords: [String: @Sendable (inout Agent.Shell, inout Bool) -> Void] = [
    "--agent": { _, _ in }, "-s": { shell, _ in shell = .sh }, "-c": { shell, _ in shell = .csh },
    "--fish": { shell, _ in shell = .fish }, "--kill": { _, kill in kill = true }, "-k": { _, kill in kill = true },
  ]

  static let version = "secretd \(swiftSecretsVersion)"
  /// The status of a command line secretd does not accept.
  static let usageError = ExitStatus(rawValue: 2)

  /// One option: its name (with its two dashes), the placeholder of its value (nil for a
  /// switch), its help, and what it does to the options (nil, or what is wrong with the value).
  struct Flag: Sendable {
    let name: String
    let value: String?
    let help: String
    var short: Character? = nil
    let apply: @Sendable (inout Options, String) -> String?

    init(
      name: String, value: String?, help: String, short: Character? = nil,
      apply: @escaping @Sendable (inout Options, String) -> String?
    ) {
      (self.name, self.value, self.help, self.short, self.apply) = (name, value, help, short, apply)
    }

    var spec: OptionSpec { OptionSpec(String(name.dropFirst(2)), short: short, value: value, help: help) }
  }

  static let flags: [Flag] =
    [
      Flag(name: "--address", value: "ADDR", help: "serve the bus at ADDR instead of the session bus") {
        $0.address = $1
        return $1.isEmpty ? "--address needs a bus address" : nil
      },
      Flag(name: "--bus-name", value: "NAME", help: "own NAME instead of org.freedesktop.secrets") {
        $0.busName = $1
        return $1.isEmpty ? "--bus-name needs a name" : nil
      },
      Flag(
        name: "--replace", value: nil, help: "take the name from a provider that allows it (see --allow-replacement)",
        short: "r"
      ) {
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
        name: "--persistent", value: nil,
        help: "also keep a collection 'login', the default, sealed on disk: it outlives a stop and a reboot "
          + "(locked until `secretctl unlock`); 'session' stays in memory only"
      ) { options, _ in
        options.persistent = true
        return nil
      },
      Flag(
        name: "--data-folder", value: "DIR",
        help: "where --persistent seals 'login' (default $XDG_DATA_HOME/secretd, else ~/.local/share/secretd)"
      ) {
        $0.dataFolder = $1
        return $1.hasPrefix("/") ? nil : "--data-folder needs an absolute path"
      },
      Flag(
        name: "--tcti", value: "CONF",
        help: "the TPM that unseals --persistent's TPM unlocker at start (`secretctl unlocker add tpm`), as a "
          + "tpm2-tss TCTI such as device:/dev/tpmrm0 or swtpm:path=SOCKET (default tpm2-tss's: /dev/tpmrm0 first)"
      ) {
        $0.tcti = $1
        return $1.isEmpty ? "--tcti needs a TCTI configuration, such as device:/dev/tpmrm0" : nil
      },
      Flag(
        name: "--default-ttl", value: "SECONDS",
        help: "expire items that carry no xdg:expires/expires-at attribute after SECONDS (default: never)"
      ) {
        guard let seconds = UInt64($1), seconds > 0 else { return "--default-ttl needs a positive number of seconds" }
        $0.configuration.defaultTTL = seconds
        return nil
      },
    ] + Limit.allCases.map { limitFlag($0) }

  /// A flag that sets one of the daemon's limits; sizes take K, M or G. `here` says the memory
  /// budget's default on this machine (the manual page, made elsewhere, leaves it out).
  static func limitFlag(_ limit: Limit, here: Bool = true) -> Flag {
    let defaults = Limits()
    let current = defaults[keyPath: limit.keyPath]
    let shown =
      limit == .memory
      ? "from RLIMIT_MEMLOCK" + (here ? ", here \(size(current))" : "")
      : limit.isSize ? size(current) : "\(current)"
    return Flag(name: limit.flag, value: limit.isSize ? "BYTES" : "N", help: "\(limit.help) (default \(shown))") {
      guard let number = limit.isSize ? parseSize($1) : Int($1), number > 0 else {
        return "\(limit.flag) needs a positive \(limit.isSize ? "size, such as 4096 or 64M" : "number")"
      }
      $0.configuration.limits[keyPath: limit.keyPath] = number
      return nil
    }
  }

  static let help = OptionSpec("help", short: "h", help: "show this help")
  static let versionOption = OptionSpec("version", help: "show the version")
  static let manualOption = OptionSpec("manual", help: "print this manual page, secretd(8), in roff")
  static let syntax = CommandLineSyntax(options: flags.map(\.spec) + [help, versionOption, manualOption])

  /// What secretd is and does, for --help and the manual page.
  static let description = """
    A freedesktop Secret Service provider that keeps secrets in memory only (with --persistent,
    also a collection sealed on disk). Serves only the user it runs as. Runs in the foreground; logs lifecycle events to stderr; exits 0 on
    SIGTERM or SIGINT, 1 when it loses its name or the bus.
    """

  /// The two ways to start secretd without systemd, for --help and the manual page.
  static let headless = """
    secretd run [OPTION...] -- COMMAND [ARGUMENT...] starts a private bus and secretd for one
    command (a CI job, a container, a test suite), with DBUS_SESSION_BUS_ADDRESS pointing at it,
    and ends both, secrets and all, when the command ends; its exit status is the command's.
    eval "$(secretd --agent)", in ssh-agent's manner, starts a private bus and secretd detached
    from the terminal, once per user (a later login gets the same one), and prints the shell lines
    that export DBUS_SESSION_BUS_ADDRESS and SECRETD_AGENT_PID (-s sh, -c csh, --fish; guessed
    from $SHELL). Where the session bus already has a Secret Service it starts nothing. --kill
    ends the agent and prints the lines that forget it.
    """

  static var usage: String {
    "Usage: secretd [OPTION...]\n       secretd run [OPTION...] -- COMMAND [ARGUMENT...]\n"
      + "       secretd --agent [-s|-c|--fish] [--kill] [OPTION...]\n\n\(description)\n\n\(headless)\n\nOptions:\n\n"
      + helpTable(syntax.options.map { ($0.synopsis, $0.help) }, columns: 100, firstColumnLimit: 30)
  }

  static func parse(_ arguments: [String]) -> Outcome {
    if arguments.first == "run" {
      let rest = Array(arguments.dropFirst())
      let split = rest.firstIndex(of: "--")
      let secretdOptions = split.map { Array(rest[..<$0]) } ?? []
      let command = split.map { Array(rest[($0 + 1)...]) } ?? rest
      guard case .run = parseDaemon(secretdOptions) else { return parseDaemon(secretdOptions) }
      return .runCommand(command, secretdOptions: secretdOptions)
    }
    if arguments.contains("--agent") {
      var (shell, kill) = (Agent.Shell.guessed, false)
      for word in arguments { agentWords[word]?(&shell, &kill) }
      let secretdOptions = arguments.filter { agentWords[$0] == nil }
      guard case .run = parseDaemon(secretdOptions) else { return parseDaemon(secretdOptions) }
      return .agent(shell, kill: kill, secretdOptions: secretdOptions)
    }
    return parseDaemon(arguments)
  }

  private static func parseDaemon(_ arguments: [String]) -> Outcome {
    let parsed: ParsedArguments
    do throws(UsageError) {
      parsed = try syntax.parse(arguments)
    } catch {
      return .exit(status: usageError, message: "secretd: \(error.message)\nTry 'secretd --help'.")
    }
    if parsed.wantsHelp { return .exit(status: .success, message: usage) }
    if parsed.flag(versionOption.long) { return .exit(status: .success, message: version) }
    if parsed.flag(manualOption.long) { return .exit(status: .success, message: manualPage) }
    var options = Options()
    for flag in flags {
      let long = flag.spec.long
      guard let value = flag.value == nil ? (parsed.flag(long) ? "" : nil) : parsed.option(long) else { continue }
      if let problem = flag.apply(&options, value) {
        return .exit(status: usageError, message: "secretd: \(problem)\nTry 'secretd --help'.")
      }
    }
    if options.persistent {
      guard let folder = options.dataFolder ?? defaultDataFolder() else {
        return .exit(
          status: usageError, message: "secretd: --persistent needs $XDG_DATA_HOME, $HOME or --data-folder")
      }
      options.configuration.persistentFolder = folder
      options.configuration.tcti = options.tcti
    } else if let needless = options.dataFolder != nil ? "--data-folder" : options.tcti != nil ? "--tcti" : nil {
      return .exit(status: usageError, message: "secretd: \(needless) needs --persistent\nTry 'secretd --help'.")
    }
    return .run(options)
  }

  /// `$XDG_DATA_HOME/secretd`, else `~/.local/share/secretd`; nil when neither is set.
  static func defaultDataFolder() -> String? {
    if let data = Environment.value(of: "XDG_DATA_HOME"), data.hasPrefix("/") { return data + "/secretd" }
    if let home = Environment.value(of: "HOME"), home.hasPrefix("/") { return home + "/.local/share/secretd" }
    return nil
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
  static func size(_ bytes: Int) -> String { Size.text(bytes) }

}
