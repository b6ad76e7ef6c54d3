// exec: run a command with secrets in its environment, by becoming it.
import CommandLineSyntax
import SecretClient
import SystemCalls

enum ExecCommand {
  static let spec = CommandSpec(
    "exec", summary: "Run COMMAND with secrets in its environment (like envchain, aws-vault exec).",
    discussion: """
      Each -e VAR=SERVICE[/ACCOUNT] puts the secret of SERVICE and ACCOUNT into the variable VAR
      (the last / separates the account); VAR=SERVICE alone is the secret stored with no
      account, never one of SERVICE's accounts. Every secret is read first: if one is missing or
      cannot be read, nothing is run. Then secretctl replaces itself with COMMAND (execvp, found
      on PATH), so no parent process keeps the secrets, and COMMAND's exit status is the status.
      Options end at COMMAND; `--` may also end them.
      Exit status: COMMAND's own; 1 a secret is missing; 2 usage error; 3 Secret Service error;
      126 COMMAND cannot be run; 127 COMMAND was not found (as env(1)).
      Example: secretctl exec -e GITHUB_TOKEN=github.com/alice -- gh repo list
      """,
    arguments: [
      ArgumentSpec("COMMAND", "The program to run, found on PATH."),
      ArgumentSpec("ARG", "Its arguments.", optional: true, variadic: true),
    ],
    options: [
      OptionSpec(
        "env", short: "e", value: "VAR=SERVICE[/ACCOUNT]", repeatable: true,
        help: "Set VAR to the secret of SERVICE (and ACCOUNT). Repeatable."),
      Common.collectionFilter,
    ],
    optionsEndAtFirstPositional: true
  ) { arguments, console throws(CLIError) in
    let bindings = try arguments.values("env").map { (word: String) throws(CLIError) in try Binding(word) }
    guard !bindings.isEmpty else {
      throw .usage("give at least one -e VAR=SERVICE[/ACCOUNT]; see `secretctl exec --help`")
    }
    guard let command = arguments.argument("COMMAND") else {
      throw .usage("missing COMMAND; see `secretctl exec --help`")
    }
    let client = console.client()
    let collection = arguments.option("collection").map(CollectionID.init)
    for binding in bindings {
      let found = try service(client) { () throws(SecretError) in
        try client.read(service: binding.service, account: binding.account, in: collection)
      }
      guard let value = found else {
        throw ItemCommands.nothingNamed(
          SecretClient.attributes(service: binding.service, account: binding.account),
          "\(ItemCommands.describe(binding.service, binding.account)) (for \(binding.variable))", in: collection,
          client: client, consequence: "; nothing was run")
      }
      try setVariable(binding.variable, toSecret: value)
    }
    return becomeCommand(command, arguments: [command] + arguments.all("ARG"), console: console)
  }

  /// Puts a secret in the environment the command will inherit; a binary one cannot go there.
  static func setVariable(_ name: String, toSecret value: SecretValue) throws(CLIError) {
    guard !value.bytes.contains(0), value.isText else {
      throw .usage(
        "the secret for \(name) is binary (not UTF-8 text without NUL) and cannot go in an environment variable; nothing was run"
      )
    }
    let set = value.bytes.withUnsafeBytes { bytes in Result { () throws(Errno) in try Environment.set(name, to: bytes) }
    }
    guard case .success = set else { throw .usage("cannot set the environment variable \(name)") }
  }

  /// Replaces secretctl with `command`; returns only when that fails, with env(1)'s status.
  static func becomeCommand(_ command: String, arguments: [String], console: Console) -> ExitStatus {
    cannotRun(command, execute(command, arguments: arguments, searchingPath: true), console: console)
  }

  /// Reports why `command` could not be run, with env(1)'s status: 127 not found, 126 otherwise.
  static func cannotRun(_ command: String, _ failure: Errno, console: Console) -> ExitStatus {
    console.report("cannot run \(command): \(failure)")
    return failure == .noSuchFile || failure == .notDirectory ? .commandNotFound : .cannotExecute
  }

  /// One `-e VAR=SERVICE[/ACCOUNT]`.
  struct Binding: Hashable {
    var variable: String
    var service: String
    var account: String?
  }
}

extension ExecCommand.Binding {
  /// Parses `VAR=SERVICE[/ACCOUNT]`; kept out of the struct so its memberwise init remains.
  init(_ word: String) throws(CLIError) {
    guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
      throw .usage("-e \(word) is not VAR=SERVICE[/ACCOUNT]; see `secretctl exec --help`")
    }
    variable = String(word[..<equals])
    let target = word[word.index(after: equals)...]
    if let slash = target.lastIndex(of: "/"), slash != target.startIndex {
      service = String(target[..<slash])
      let rest = target[target.index(after: slash)...]
      account = rest.isEmpty ? nil : String(rest)
    } else {
      service = String(target)
    }
    guard !service.isEmpty, EnvironmentName.isValid(variable) else {
      throw .usage("-e \(word) is not VAR=SERVICE[/ACCOUNT]; see `secretctl exec --help`")
    }
  }
}
