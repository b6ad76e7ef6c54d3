// read, run, inject: secrets named by references (secret://SERVICE/ACCOUNT, bao://MOUNT/PATH) in
// the environment, env files and templates, resolved at the last moment.
import CommandLineSyntax
import SecretClient
import SystemCalls

enum ReferenceCommands {
  static let referenceHelp = """
    A reference is secret://SERVICE/ACCOUNT, or secret://SERVICE for a secret with no account;
    parts are percent-encoded (%2F for a / inside one). Parameters after ?, joined by &:
    collection=NAME looks only in that collection (default, session or an object path);
    attr.KEY=VALUE also requires another attribute. Example:
    secret://github.com/alice?collection=session
    A reference to OpenBao is bao://MOUNT/PATH#FIELD (FIELD: value unless given), read from
    BAO_ADDR with BAO_TOKEN (else the token `secretctl set openbao token` keeps):
    bao://secret/deploy/api#token
    """

  static let read = CommandSpec(
    "read", summary: "Print the secret a reference names (secret://SERVICE/ACCOUNT).",
    discussion: """
      \(referenceHelp)
      The secret is written as stored; a newline follows only when stdout is a terminal.
      Exit status: 0 printed, 1 no such secret, 2 malformed reference, 3 Secret Service error.
      """,
    arguments: [ArgumentSpec("REFERENCE", "secret://SERVICE/ACCOUNT[?collection=NAME&attr.KEY=VALUE]")]
  ) { arguments, console throws(CLIError) in
    guard let text = arguments.argument("REFERENCE") else { throw .usage("missing REFERENCE") }
    try console.writeSecret(try resolve(try Reference(text), console: console).bytes)
    return .success
  }

  static let run = CommandSpec(
    "run", summary: "Run COMMAND with the secrets its environment and env files refer to.",
    discussion: """
      Every variable of each --env-file (dotenv: NAME=VALUE, export, # comments, 'single' and
      "double" quotes; later files win) and of each -e (which win over files) whose value is a
      reference is given its secret. Variables secretctl inherits are passed on as they are,
      references unresolved, unless --resolve-inherited is given: whoever can set a variable of
      the environment (a CI job's configuration, a pull request) would otherwise choose which
      secret lands in a variable the command may print. Every reference is resolved first: if
      one is missing, nothing is run. Then
      secretctl replaces itself with COMMAND (found on PATH), so no parent keeps the secrets.
      With --mask, secretctl stays COMMAND's parent instead and copies its output and errors
      with every resolved secret replaced by <concealed> (COMMAND's own output is then a pipe,
      not the terminal). Options end at COMMAND; `--` may also end them.
      \(referenceHelp)
      Exit status: COMMAND's own; 1 a reference matches no secret; 2 usage error (a malformed
      reference, env file or variable name); 3 Secret Service error; 126 COMMAND cannot be run;
      127 COMMAND was not found.
      Example: secretctl run --env-file .env -- ./deploy.sh
      """,
    arguments: [
      ArgumentSpec("COMMAND", "The program to run, found on PATH."),
      ArgumentSpec("ARG", "Its arguments.", optional: true, variadic: true),
    ],
    options: [
      OptionSpec(
        "env-file", value: "FILE", repeatable: true, help: "Read NAME=VALUE lines from FILE (dotenv). Repeatable."),
      OptionSpec(
        "env", short: "e", value: "NAME=VALUE", repeatable: true,
        help: "Set NAME to VALUE, a reference or plain text. Repeatable."),
      OptionSpec("mask", help: "Replace the secrets in COMMAND's output with <concealed>."),
      OptionSpec(
        "resolve-inherited",
        help: "Also resolve references in the variables secretctl inherits (off: see why below)."),
    ],
    optionsEndAtFirstPositional: true
  ) { arguments, console throws(CLIError) in
    guard let command = arguments.argument("COMMAND") else {
      throw .usage("missing COMMAND; see `secretctl run --help`")
    }
    let secrets = try resolve(
      try assignments(arguments), inherited: arguments.flag("resolve-inherited"), console: console)
    let argv = [command] + arguments.all("ARG")
    guard arguments.flag("mask") else { return ExecCommand.becomeCommand(command, arguments: argv, console: console) }
    do throws(Errno) { return try runMasked(command, arguments: argv, secrets: secrets) } catch {
      return ExecCommand.cannotRun(command, error, console: console)
    }
  }

  static let inject = CommandSpec(
    "inject", summary: "Fill a template's {{ secret://… }} references with their secrets.",
    discussion: """
      Reads the template (-i FILE, or stdin) and writes it (-o FILE, or stdout) with each
      {{ REFERENCE }} replaced by its secret, as stored; other {{ … }} are left as they are.
      Every reference is resolved before anything is written: if one is missing, nothing is.
      An empty template on stdin writes nothing (exit 2) unless --allow-empty.
      The -o file is created with mode 0600 and replaced atomically (written beside it, then
      renamed), so it never holds half a template.
      \(referenceHelp)
      Exit status: 0 written; 1 a reference matches no secret; 2 usage error; 3 Secret Service
      error.
      Example: secretctl inject -i config.yml.tpl -o config.yml
      """,
    options: [
      OptionSpec("in-file", short: "i", value: "FILE", help: "The template; stdin when not given."),
      OptionSpec("out-file", short: "o", value: "FILE", help: "Where to write; stdout when not given."),
      OptionSpec("allow-empty", help: "Write an empty output when the template on stdin is empty."),
    ]
  ) { arguments, console throws(CLIError) in
    let inFile = arguments.option("in-file")
    let template = try readTemplate(inFile)
    // `cat missing.tpl | secretctl inject -o config.yml` would otherwise empty config.yml.
    guard !template.isEmpty || inFile != nil || arguments.flag("allow-empty") else {
      throw .usage("nothing on stdin; nothing was written (--allow-empty writes an empty output)")
    }
    // A template read from stdin goes with the command if it is handed to secretctl-bao, which
    // reads a regular file again; a pipe named by -i cannot be read twice.
    let consumedInput = inFile == nil ? template : nil
    let output = try Template.render(template) { reference throws(CLIError) in
      if case .bao = reference, console.openBao == nil, let inFile, !Files.isRegularFile(inFile) {
        throw .usage("bao:// references need the template on stdin or in a regular file, not in \(inFile)")
      }
      return try resolve(reference, console: console, "; nothing was written", standardInput: consumedInput).bytes
    }
    guard let path = arguments.option("out-file") else {
      guard output.withUnsafeBytes({ console.write($0) }) else { throw .service("cannot write to stdout") }
      return .success
    }
    do throws(AtomicWriteError) {
      try output.withUnsafeBytes { (bytes) throws(AtomicWriteError) in
        try Files.replace(path, with: bytes, permissions: FilePermissions(rawValue: 0o600))
      }
    } catch {
      throw .service("cannot write \(path): \(error)")
    }
    return .success
  }

  /// The secret `reference` names; a missing one is exit status 1, naming the reference and
  /// `purpose`, then saying `consequence`.
  static func resolve(
    _ reference: Reference, console: Console, for purpose: String = "", _ consequence: String = "",
    standardInput: [UInt8]? = nil
  ) throws(CLIError) -> SecretValue {
    switch reference {
    case .secret(let reference):
      return try reference.resolve(with: console.client(), for: purpose, consequence)
    case .bao(let reference):
      let openBao = try console.openBaoAccess(standardInput: standardInput)
      guard let found = try openBao.field(reference.field, of: reference.path, in: reference.mount) else {
        throw .notFound("no secret for \(reference.text)\(purpose)\(consequence)")
      }
      return SecretValue(bytes: found, contentType: "text/plain")
    }
  }

  /// The variables of every --env-file, then of every -e, in order.
  private static func assignments(_ arguments: ParsedArguments) throws(CLIError) -> [DotEnv.Entry] {
    var entries: [DotEnv.Entry] = []
    for path in arguments.values("env-file") {
      let bytes: [UInt8]?
      do throws(FileCallError) { bytes = try Files.read(path) } catch {
        throw .usage("cannot read the env file \(path): \(error)")
      }
      guard let bytes else { throw .usage("no env file \(path)") }
      entries += try DotEnv.parse(String(decoding: bytes, as: UTF8.self), source: path)
    }
    for word in arguments.values("env") {
      guard let equals = word.firstIndex(of: "="), EnvironmentName.isValid(String(word[..<equals])) else {
        throw .usage("-e \(word.prefix { $0 != "=" }) is not NAME=VALUE with a valid variable name")
      }
      entries.append(DotEnv.Entry(name: String(word[..<equals]), value: String(word[word.index(after: equals)...])))
    }
    return entries
  }

  /// Sets every variable of `entries` (the last of a name wins), giving those that hold a
  /// reference their secret, and, when `inherited`, the inherited variables that hold one too;
  /// returns the secrets (for --mask).
  private static func resolve(_ entries: [DotEnv.Entry], inherited: Bool, console: Console) throws(CLIError)
    -> [SecretBytes]
  {
    var assigned: [(name: String, value: String)] = []
    for entry in entries {
      assigned.removeAll { $0.name == entry.name }
      assigned.append((entry.name, entry.value))
    }
    if inherited {
      for (name, value) in Environment.entries
      where Reference.isReference(value) && !assigned.contains(where: { $0.name == name }) {
        assigned.append((name, value))
      }
    }
    // Handed over before any variable holds a secret: secretctl-bao starts from the same
    // command line and environment.
    if console.openBao == nil, assigned.contains(where: { BaoReference.isReference($0.value) }) {
      throw .needsOpenBao()
    }
    var secrets: [SecretBytes] = []
    for (name, value) in assigned {
      guard Reference.isReference(value) else {
        do throws(Errno) { try Environment.set(name, to: value) } catch {
          throw .usage("cannot set the environment variable \(name)")
        }
        continue
      }
      let secret = try resolve(try Reference(value), console: console, for: " (for \(name))", "; nothing was run")
      try ExecCommand.setVariable(name, toSecret: secret)
      secrets.append(secret.bytes)
    }
    return secrets
  }

  private static func readTemplate(_ path: String?) throws(CLIError) -> [UInt8] {
    guard let path else {
      do throws(Errno) { return try FileDescriptor.standardInput.readAll() } catch {
        throw .usage("cannot read the template from stdin: \(error)")
      }
    }
    let bytes: [UInt8]?
    do throws(FileCallError) { bytes = try Files.read(path) } catch { throw .usage("cannot read \(path): \(error)") }
    guard let bytes else { throw .usage("no template \(path)") }
    return bytes
  }
}

/// `{{ secret://… }}` in a template.
enum Template {
  /// The template with every reference replaced; `secret` is asked once per reference.
  static func render(
    _ template: [UInt8], secret: (Reference) throws(CLIError) -> SecretBytes
  ) throws(CLIError) -> SecretBytes {
    let output = SecretBytes()
    var rest = template[...]
    while let open = rest.firstRange(matching: "{{".utf8),
      let close = rest[open.upperBound...].firstRange(matching: "}}".utf8)
    {
      let inner = String(decoding: rest[open.upperBound..<close.lowerBound], as: UTF8.self)
      let trimmed = inner.trimmingBlanks
      output.append(contentsOf: rest[..<open.lowerBound])
      if Reference.isReference(trimmed) {
        output.append(contentsOf: try secret(try Reference(trimmed)))
      } else {
        output.append(contentsOf: rest[open.lowerBound..<close.upperBound])
      }
      rest = rest[close.upperBound...]
    }
    output.append(contentsOf: rest)
    return output
  }
}

extension String {
  fileprivate var trimmingBlanks: String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}
