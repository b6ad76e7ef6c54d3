import CommandLineSyntax
import SecretClient
import Testing

@testable import SecretCLI

@Suite("Argument parsing (pure)")
struct ArgumentParserTests {
  static let spec = CommandSpec(
    "demo", summary: "A command for tests.",
    arguments: [ArgumentSpec("SERVICE", "s"), ArgumentSpec("ACCOUNT", "a", optional: true)],
    options: [
      OptionSpec("label", short: "l", value: "TEXT", help: "label"),
      OptionSpec("env", short: "e", value: "VAR", repeatable: true, help: "env"),
      OptionSpec("json", help: "json"),
    ]
  ) { _, _ in .success }

  @Test func positionalsGoToTheirArgumentsInOrder() throws {
    let parsed = try Self.spec.parse(["svc", "acct"])
    #expect(parsed.argument("SERVICE") == "svc")
    #expect(parsed.argument("ACCOUNT") == "acct")
    #expect(try Self.spec.parse(["svc"]).argument("ACCOUNT") == nil)
  }

  @Test func everySpellingOfAnOptionValueIsAccepted() throws {
    for words in [
      ["--label", "x", "s"], ["--label=x", "s"], ["-l", "x", "s"], ["-lx", "s"], ["s", "--label", "x"],
    ] {
      let parsed = try Self.spec.parse(words)
      #expect(parsed.option("label") == "x", "\(words)")
      #expect(parsed.argument("SERVICE") == "s", "\(words)")
    }
    #expect(try Self.spec.parse(["--label=", "s"]).option("label") == "")
    #expect(try Self.spec.parse(["--label=a=b", "s"]).option("label") == "a=b")
  }

  @Test func repeatableOptionsCollectEveryValue() throws {
    let parsed = try Self.spec.parse(["-e", "A", "--env=B", "-eC", "s"])
    #expect(parsed.values("env") == ["A", "B", "C"])
  }

  @Test func doubleDashEndsOptions() throws {
    let parsed = try Self.spec.parse(["--json", "--", "--label", "-x"])
    #expect(parsed.flag("json"))
    #expect(parsed.argument("SERVICE") == "--label")
    #expect(parsed.argument("ACCOUNT") == "-x")
    #expect(try Self.spec.parse(["-"]).argument("SERVICE") == "-")
  }

  @Test func optionsCanEndAtTheFirstPositionalLikeEnv() throws {
    let exec = try #require(command(named: "exec"))
    let parsed = try exec.parse(["-e", "T=svc/acct", "sh", "-c", "echo $T", "--help"])
    #expect(parsed.values("env") == ["T=svc/acct"])
    #expect(parsed.argument("COMMAND") == "sh")
    #expect(parsed.all("ARG") == ["-c", "echo $T", "--help"])
    #expect(!parsed.wantsHelp)
  }

  @Test(arguments: [
    (["s", "a", "extra"], "too many arguments (1 extra, not shown)"),
    ([], "missing SERVICE"),
    (["--bogus", "s"], "unknown option --bogus"),
    (["-z", "s"], "unknown option -z"),
    (["s", "--label"], "--label needs a value (TEXT)"),
    (["--json=yes", "s"], "--json takes no value"),
    (["--label", "a", "--label", "b", "s"], "--label is given more than once"),
  ])
  func usageErrorsAreOneLineAndPointAtHelp(words: [String], message: String) {
    #expect(throws: CLIError.usage("\(message); see `secretctl demo --help`")) { try Self.spec.parse(words) }
  }

  @Test func helpWinsOverOtherMistakes() throws {
    #expect(try Self.spec.parse(["--bogus", "--help"]).wantsHelp)
    #expect(try Self.spec.parse(["-h"]).wantsHelp)
  }

  @Test func helpTextIsGeneratedFromTheSpec() {
    let help = Self.spec.helpText
    #expect(help.contains("Usage: secretctl demo [OPTIONS] SERVICE [ACCOUNT]"))
    #expect(help.contains("-l, --label TEXT"))
    #expect(help.contains("-e, --env VAR"))
    #expect(help.contains("--json"))
    #expect(help.contains("-h, --help"))
  }

  @Test func everyCommandOfTheTableHasHelpAndAUniqueName() {
    #expect(Set(commandTable.map(\.name)).count == commandTable.count)
    #expect(
      commandTable.map(\.name) == [
        "get", "set", "delete", "search", "lock", "unlock", "status", "read", "exec", "run", "inject",
        "git-credential", "credential set", "credential get", "credential list", "credential delete",
        "credential drop-in", "unlocker add", "unlocker list", "unlocker remove", "pam-unlock", "export", "import",
        "store discard-rejected", "setup",
        "completion",
      ])
    for spec in commandTable {
      #expect(spec.helpText.contains("Usage: secretctl \(spec.name)"))
      #expect(programHelpText.contains(spec.name))
    }
  }
}

@Suite("Small pieces (pure)")
struct PieceTests {
  @Test(arguments: [
    ("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400), ("1h30m", 5400), ("1w", 604_800),
  ])
  func durationsParse(text: String, seconds: UInt64) {
    #expect(parseDuration(text) == seconds)
  }

  @Test(arguments: ["", "0", "0s", "h", "1x", "-5", "1.5h", "99999999999999999999d"])
  func badDurationsAreRejected(text: String) {
    #expect(parseDuration(text) == nil)
  }

  @Test func jsonEscapesAndKeepsKeyOrder() {
    let json = JSON.object([
      ("b", .string("q\"\\\n\u{1}")), ("a", .array([.number(1), .bool(true), .null])), ("e", .object([])),
    ])
    #expect(
      json.rendered
        == "{\n  \"b\": \"q\\\"\\\\\\n\\u0001\",\n  \"a\": [\n    1,\n    true,\n    null\n  ],\n  \"e\": {}\n}\n")
  }

  @Test func gitCredentialInputIsParsedAsGitSendsIt() {
    let input = Array(
      "protocol=https\nhost=example.com:8080\npath=a/b.git\nusername=bob\npassword=p=w\nwwwauth[]=x\nnonsense\n\nprotocol=ignored\n"
        .utf8)
    let credential = input.withUnsafeBytes { Credential(parsing: $0) }
    #expect(credential.protocol == "https")
    #expect(credential.host == "example.com")
    #expect(credential.port == 8080)
    #expect(credential.password == SecretBytes("p=w"))
    #expect(
      credential.attributes == [
        "protocol": "https", "server": "example.com", "port": "8080", "object": "a/b.git", "user": "bob",
      ])
    #expect(credential.label == "Git: https://example.com:8080/a/b.git")
  }

  @Test func aHostWithoutPortHasNoPortAttribute() {
    #expect(Credential.splitPort("example.com") == ("example.com", nil))
    #expect(Credential.splitPort("[::1]") == ("[::1]", nil))
    #expect(Credential.splitPort("[::1]:22") == ("[::1]", 22))
    let credential = Array("protocol=https\nhost=example.com\n".utf8).withUnsafeBytes { Credential(parsing: $0) }
    #expect(credential.attributes == ["protocol": "https", "server": "example.com"])
    #expect(credential.label == "Git: https://example.com/")
  }

  @Test func gitExtraFieldsRoundTripThroughTheStoredSecret() {
    let credential = Array("password=pw\npassword_expiry_utc=1700000000\noauth_refresh_token=tok\n".utf8)
      .withUnsafeBytes { Credential(parsing: $0) }
    let stored = credential.storedSecret()
    #expect(String(decoding: stored, as: UTF8.self) == "pw\npassword_expiry_utc=1700000000\noauth_refresh_token=tok")
    var read = Credential(parsing: UnsafeRawBufferPointer(start: nil, count: 0))
    read.takeSecret(stored)
    #expect(read.password == SecretBytes("pw"))
    #expect(read.passwordExpiry == "1700000000")
    #expect(read.oauthRefreshToken == SecretBytes("tok"))
  }

  @Test func execBindingsSplitAtTheLastSlash() throws {
    #expect(try ExecCommand.Binding("T=svc/acct") == .init(variable: "T", service: "svc", account: "acct"))
    #expect(try ExecCommand.Binding("T=svc") == .init(variable: "T", service: "svc", account: nil))
    #expect(
      try ExecCommand.Binding("T=https://x.org/alice")
        == .init(variable: "T", service: "https://x.org", account: "alice"))
    #expect(throws: CLIError.self) { try ExecCommand.Binding("=svc") }
    #expect(throws: CLIError.self) { try ExecCommand.Binding("T=") }
    #expect(throws: CLIError.self) { try ExecCommand.Binding("T") }
  }
}

@Suite("Did you mean (pure)")
struct NearestNameTests {
  @Test(arguments: [
    ("gte", "get"), ("serach", "search"), ("stauts", "status"), ("delet", "delete"), ("comp", "completion"),
  ])
  func aSlipOfTheKeysFindsTheCommand(typed: String, meant: String) {
    #expect(nearest(typed, in: commandTable.map(\.words[0])) == meant)
  }

  @Test(arguments: ["frobnicate", "x", "getter-setter"])
  func aWordFarFromEveryCommandFindsNone(typed: String) {
    #expect(nearest(typed, in: commandTable.map(\.words[0])) == nil)
  }

  @Test func editDistanceCountsASwapOfNeighboursAsOne() {
    #expect(editDistance("gte", "get") == 1)
    #expect(editDistance("abc", "abc") == 0)
    #expect(editDistance("", "abc") == 3)
    #expect(editDistance("kitten", "sitting") == 3)
  }
}
