import Foundation
import SecretClient
import SecretTestSupport
import Testing

@testable import SecretCLI

@Suite("references: read, run, inject")
struct ReferenceCommandTests {
  /// secretctl with `extra` added to the provider's environment.
  func secretctl(
    _ instance: ProviderInstance, _ arguments: [String], environment extra: [String: String], input: String? = nil
  ) throws -> ProcessOutput {
    try runProcess(
      try secretctlPath(), arguments, input: input.map { Array($0.utf8) },
      environment: instance.environment.merging(extra) { $1 }, in: instance.bus.directory)
  }

  @Test(arguments: Provider.all)
  func readResolvesEncodedPartsCollectionsAndOtherAttributes(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try SecretCLITests.secretctl(instance, ["set", "my/svc", "bob smith"], input: "slashed")
      _ = try SecretCLITests.secretctl(instance, ["set", "--collection", "session", "tmp", "eve"], input: "in session")
      try await instance.client().write(
        SecretValue("tagged"), attributes: ["service": "api", "account": "ci", "env": "prod"], label: "api")
      try await instance.client().write(
        SecretValue("untagged"), attributes: ["service": "api", "account": "ci"], label: "api", exactly: true)
      let read = { (reference: String) in try SecretCLITests.secretctl(instance, ["read", reference]) }
      #expect(try read("secret://my%2Fsvc/bob%20smith").stdoutText == "slashed")
      #expect(try read("secret://tmp/eve?collection=session").stdoutText == "in session")
      #expect(try read("secret://api/ci?attr.env=prod").stdoutText == "tagged")
      // secret://SERVICE is the service's secret with no account, never one of its accounts'.
      #expect(try read("secret://api").status == 1)
      _ = try SecretCLITests.secretctl(instance, ["set", "api"], input: "no account")
      #expect(try read("secret://api").stdoutText == "no account")
      let missing = try read("secret://api/nobody")
      #expect(missing.status == 1 && missing.stderrIsOneMessage && missing.stderrText.contains("secret://api/nobody"))
      for malformed in ["secret://", "secret://a/b/c", "secret://a/%zz", "secret://a?colour=red", "http://a/b"] {
        #expect(try read(malformed).status == 2, "\(malformed)")
      }
    }
  }

  @Test(arguments: Provider.all)
  func runGivesEveryReferenceOfTheEnvironmentEnvFilesAndOptionsItsSecret(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try SecretCLITests.secretctl(instance, ["set", "github.com", "alice"], input: "tok en")
      _ = try SecretCLITests.secretctl(instance, ["set", "db"], input: "pw")
      let envFile = instance.bus.directory.appending(path: "app.env")
      try Data(
        """
        # a comment, then a blank line

        export TOKEN=secret://github.com/alice
        DB = 'secret://db'
        PLAIN="two words \\"quoted\\"" # a comment after a value
        UNQUOTED=a b # not part of it
        MULTI="line one
        line two"
        OVERRIDDEN=from-file

        """.utf8
      ).write(to: envFile)
      let script =
        #"printf '%s|%s|%s|%s|%s|%s|%s' "$TOKEN" "$DB" "$PLAIN" "$UNQUOTED" "$MULTI" "$OVERRIDDEN" "$INHERITED""#
      let run = try secretctl(
        instance,
        [
          "run", "--resolve-inherited", "--env-file", envFile.path, "-e", "OVERRIDDEN=secret://db", "--", "/bin/sh",
          "-c",
          script,
        ],
        environment: ["INHERITED": "secret://github.com/alice"])
      #expect(run.status == 0, "\(run.stderrText)")
      #expect(run.stdoutText == "tok en|pw|two words \"quoted\"|a b|line one\nline two|pw|tok en")
    }
  }

  @Test(
    "a reference planted in the inherited environment (a CI variable) stays text unless --resolve-inherited asks for it",
    arguments: Provider.all)
  func runLeavesInheritedReferencesAloneUnlessAsked(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try SecretCLITests.secretctl(instance, ["set", "github.com", "alice"], input: "tok-en")
      _ = try SecretCLITests.secretctl(instance, ["set", "db"], input: "pw")
      // A job that prints a variable someone else's configuration sets, next to its own secret.
      let job = #"printf '%s|%s' "$BUILD_LABEL" "$DB""#
      let planted = ["BUILD_LABEL": "secret://github.com/alice"]
      let run = try secretctl(
        instance, ["run", "-e", "DB=secret://db", "--", "/bin/sh", "-c", job], environment: planted)
      #expect(run.status == 0, "\(run.stderrText)")
      #expect(run.stdoutText == "secret://github.com/alice|pw", "\(run.stdoutText)")
      let masked = try secretctl(
        instance, ["run", "--mask", "-e", "DB=secret://db", "--", "/bin/sh", "-c", job], environment: planted)
      #expect(masked.stdoutText == "secret://github.com/alice|<concealed>")
      // Asked for, the inherited reference is resolved; a variable given with -e wins over it.
      let asked = try secretctl(
        instance, ["run", "--resolve-inherited", "-e", "DB=secret://db", "--", "/bin/sh", "-c", job],
        environment: planted)
      #expect(asked.stdoutText == "tok-en|pw")
      let overridden = try secretctl(
        instance, ["run", "--resolve-inherited", "-e", "BUILD_LABEL=plain", "--", "/bin/sh", "-c", job],
        environment: planted.merging(["DB": "secret://nope"]) { $1 })
      #expect(overridden.status == 1 && overridden.stderrText.contains("secret://nope"), "\(overridden.stderrText)")
    }
  }

  @Test(arguments: Provider.all)
  func runResolvesEverythingFirstAndRunsNothingWhenAReferenceIsMissing(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try SecretCLITests.secretctl(instance, ["set", "db"], input: "pw")
      let marker = instance.bus.directory.appending(path: "ran").path
      let missing = try SecretCLITests.secretctl(
        instance, ["run", "-e", "A=secret://db", "-e", "B=secret://nope/x", "--", "/bin/sh", "-c", "touch '\(marker)'"])
      #expect(missing.status == 1)
      #expect(
        missing.stderrIsOneMessage && missing.stderrText.contains("secret://nope/x") && missing.stderrText.contains("B")
      )
      #expect(!FileManager.default.fileExists(atPath: marker))
      for badName in ["1A=x", "A-B=x", "=x", "A"] {
        #expect(
          try SecretCLITests.secretctl(instance, ["run", "-e", badName, "--", "/bin/true"]).status == 2, "\(badName)")
      }
      #expect(try SecretCLITests.secretctl(instance, ["exec", "-e", "A-B=db", "/bin/true"]).status == 2)
      instance.stopProvider()
      let unreachable = try SecretCLITests.secretctl(instance, ["run", "-e", "A=secret://db", "--", "/bin/true"])
      #expect(unreachable.status == 3, "\(unreachable.stderrText)")
    }
  }

  @Test(arguments: Provider.all)
  func maskConcealsEverySecretInTheCommandsOutputAndErrors(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try SecretCLITests.secretctl(instance, ["set", "github.com", "alice"], input: "s3cret-token")
      // The secret is printed whole, then in two writes, on both streams.
      let script =
        #"echo "out $T"; printf '%s' "${T%?????}"; printf '%s\n' "${T#${T%?????}}"; echo "err $T" >&2; exit 4"#
      let run = try SecretCLITests.secretctl(
        instance, ["run", "--mask", "-e", "T=secret://github.com/alice", "--", "/bin/sh", "-c", script])
      #expect(run.status == 4)
      #expect(run.stdoutText == "out <concealed>\n<concealed>\n", "\(run.stdoutText)")
      #expect(run.stderrText == "err <concealed>\n", "\(run.stderrText)")
      // Positive control: without --mask the command prints the secret.
      let plain = try SecretCLITests.secretctl(
        instance, ["run", "-e", "T=secret://github.com/alice", "--", "/bin/sh", "-c", #"echo "out $T""#])
      #expect(plain.stdoutText == "out s3cret-token\n")
    }
  }

  @Test(arguments: Provider.all)
  func injectWritesTheTemplateAtOnceWithMode0600OrNothing(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      _ = try SecretCLITests.secretctl(instance, ["set", "db"], input: "pw")
      let folder = instance.bus.directory
      let template = folder.appending(path: "config.tpl")
      try Data("password: {{ secret://db }}\nother: {{ not.a.reference }}\n".utf8).write(to: template)
      let output = folder.appending(path: "config.yml")
      let inject = try SecretCLITests.secretctl(instance, ["inject", "-i", template.path, "-o", output.path])
      #expect(inject.status == 0, "\(inject.stderrText)")
      #expect(try String(contentsOf: output, encoding: .utf8) == "password: pw\nother: {{ not.a.reference }}\n")
      let mode = try FileManager.default.attributesOfItem(atPath: output.path)[.posixPermissions] as? Int
      #expect(mode == 0o600)
      let stdout = try SecretCLITests.secretctl(instance, ["inject"], input: "x={{secret://db}}")
      #expect(stdout.stdoutText == "x=pw")

      // Empty stdin (a template that was not there) leaves the output file as it was.
      let emptied = try SecretCLITests.secretctl(instance, ["inject", "-o", output.path], input: "")
      #expect(emptied.status == 2 && emptied.stderrText.contains("nothing on stdin"), "\(emptied.stderrText)")
      #expect(try String(contentsOf: output, encoding: .utf8) == "password: pw\nother: {{ not.a.reference }}\n")
      let allowed = try SecretCLITests.secretctl(instance, ["inject", "--allow-empty", "-o", output.path], input: "")
      #expect(allowed.status == 0)
      #expect(try Data(contentsOf: output).isEmpty)

      let missingOutput = folder.appending(path: "never.yml")
      let missing = try SecretCLITests.secretctl(
        instance, ["inject", "-o", missingOutput.path], input: "a: {{ secret://db }}\nb: {{ secret://nope/x }}\n")
      #expect(missing.status == 1 && missing.stderrText.contains("secret://nope/x"))
      #expect(!FileManager.default.fileExists(atPath: missingOutput.path))
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains(".tmp-") })
    }
  }

  @Test func theMaskConcealsTheTailOfASecretThatEndsWithItsOwnBeginning() {
    // From the issue: `<concealed>ab` was printed, the held-back `ab` having lost its match.
    let secret = Array("ab-Sup3rS3cret-ab".utf8)
    var mask = OutputMask(secrets: [SecretBytes(copying: secret)])
    let output = secret.withUnsafeBytes { mask.filter($0) } + mask.finish()
    #expect(String(decoding: output, as: UTF8.self) == "<concealed>")
  }

  /// What masking the whole stream at once gives: every byte of every occurrence covered, each
  /// run of covered bytes one replacement. Written the plain way, for comparison.
  static func maskedAtOnce(_ text: [UInt8], secrets: [[UInt8]]) -> [UInt8] {
    var covered = [Bool](repeating: false, count: text.count)
    for secret in secrets where !secret.isEmpty && secret.count <= text.count {
      for start in 0...(text.count - secret.count) where Array(text[start..<(start + secret.count)]) == secret {
        for index in start..<(start + secret.count) { covered[index] = true }
      }
    }
    var output: [UInt8] = []
    for index in text.indices {
      if !covered[index] {
        output.append(text[index])
      } else if index == 0 || !covered[index - 1] {
        output += OutputMask.replacement
      }
    }
    return output
  }

  @Test("the mask gives the same output however the stream is cut into reads, over random texts, secrets and cuts")
  func theMaskDoesNotDependOnWhereReadsEnd() {
    var generator = SystemRandomNumberGenerator()
    // A small alphabet makes overlaps, repeats and secrets that begin with their own end common.
    let alphabet = Array("ab-".utf8)
    func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in alphabet.randomElement(using: &generator)! } }
    for round in 0..<2_000 {
      let secrets = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
        randomBytes(Int.random(in: 1...6, using: &generator))
      }
      let text = randomBytes(Int.random(in: 0...40, using: &generator))
      let expected = Self.maskedAtOnce(text, secrets: secrets)
      var cuts = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
        Int.random(in: 0...text.count, using: &generator)
      }
      cuts = ([0] + cuts + [text.count]).sorted()
      var mask = OutputMask(secrets: secrets.map { SecretBytes(copying: $0) })
      var output: [UInt8] = []
      for (from, to) in zip(cuts, cuts.dropFirst()) {
        output += text[from..<to].withUnsafeBytes { mask.filter($0) }
      }
      output += mask.finish()
      #expect(
        output == expected,
        "round \(round): text \(String(decoding: text, as: UTF8.self)), secrets \(secrets.map { String(decoding: $0, as: UTF8.self) }), cuts \(cuts)"
      )
      if output != expected { break }
    }
  }

  @Test func theMaskCatchesASecretSplitAtEveryPointBetweenTwoReads() {
    let secret = Array("s3cret".utf8)
    let text = Array("a s3cret b s3s3cret".utf8)
    for split in 0...text.count {
      var mask = OutputMask(secrets: [SecretBytes(copying: secret)])
      var output = text[..<split].withUnsafeBytes { mask.filter($0) }
      output += text[split...].withUnsafeBytes { mask.filter($0) }
      output += mask.finish()
      #expect(String(decoding: output, as: UTF8.self) == "a <concealed> b s3<concealed>", "split at \(split)")
    }
    // Overlapping secrets are concealed together, with nothing of either left.
    var mask = OutputMask(secrets: [SecretBytes("abc1"), SecretBytes("c1xyz")])
    let overlapping = Array("-abc1xyz-".utf8).withUnsafeBytes { mask.filter($0) } + mask.finish()
    #expect(String(decoding: overlapping, as: UTF8.self) == "-<concealed>-")
  }

  @Test func envFilesWithWindowsLineEndingsAreReadLineByLine() throws {
    let entries = try DotEnv.parse("# comment\r\nA=secret://svc/a\r\nB=plain\r\n", source: "crlf.env")
    #expect(entries == [DotEnv.Entry(name: "A", value: "secret://svc/a"), DotEnv.Entry(name: "B", value: "plain")])
  }

  @Test func signedEscapesAreNotPercentEscapes() throws {
    #expect(throws: CLIError.self) { try SecretReference("secret://a/%+A") }
    #expect(throws: CLIError.self) { try SecretReference("secret://a/%-0") }
  }
}
