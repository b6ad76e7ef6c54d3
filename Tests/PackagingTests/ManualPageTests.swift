// secretctl(1) and secretd(8) are printed by the programs themselves (`--manual`) from the
// tables that parse their command lines and print --help; man-db reads them as Debian will.
import Foundation
import SecretTestSupport
import Testing

@Suite("manual pages from the same declarations as --help")
struct ManualPageTests {
  static func output(_ program: String, _ arguments: [String]) throws -> String {
    let run = try runProcess(
      try builtExecutable(program).path, arguments, environment: environmentWithoutBus,
      in: FileManager.default.temporaryDirectory)
    #expect(run.status == 0, "\(program) \(arguments): \(run.stderrText)")
    return run.stdoutText
  }

  /// Every `--long` option a help text names.
  static func options(in help: String) -> Set<String> {
    Set(help.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
  }

  /// What `man` shows of a page, and what it warned about.
  static func rendered(_ page: String) throws -> (text: String, warnings: String) {
    let file = FileManager.default.temporaryDirectory.appending(path: "page-\(UUID().uuidString).man")
    try Data(page.utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    var environment = environmentWithoutBus
    environment["MANWIDTH"] = "100"
    environment["MANPAGER"] = "cat"
    // As a machine with no locale renders it (a fresh container): in ASCII.
    for locale in ["LANG", "LC_ALL", "LC_CTYPE", "LANGUAGE"] { environment[locale] = nil }
    let man = try runProcess(
      "man", ["--warnings", "-l", file.path], environment: environment, in: FileManager.default.temporaryDirectory)
    #expect(man.status == 0, "\(man.stderrText)")
    return (man.stdoutText, man.stderrText)
  }

  @Test(
    "secretctl(1) has every command of the table with every option its --help shows, and man reads it without a warning"
  )
  func secretctlPage() throws {
    let page = try Self.output("secretctl", ["--manual"])
    let (text, warnings) = try Self.rendered(page)
    #expect(warnings.isEmpty, "\(warnings)")
    #expect(text.contains("SECRETCTL(1)"))
    let help = try Self.output("secretctl", ["--help"])
    // A command's name is one or two words (`credential set`), then two spaces and its summary.
    let commands = help.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
      .split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
      .compactMap { $0.dropFirst(2).components(separatedBy: "  ").first }
    #expect(commands.count >= 13 && commands.contains("setup"), "\(commands)")
    for command in commands {
      #expect(text.contains("\n   secretctl \(command)\n"), "secretctl(1) lacks \(command)")
      let section = text.components(separatedBy: "\n   secretctl \(command)\n").dropFirst().first ?? ""
      let shown = section.components(separatedBy: "\n   secretctl ").first ?? ""
      let words = command.split(separator: " ").map(String.init)
      let missing = Self.options(in: try Self.output("secretctl", words + ["--help"])).subtracting(
        Self.options(in: shown))
      #expect(missing.isEmpty, "secretctl(1)'s \(command) lacks \(missing.sorted())")
    }
    #expect(Self.options(in: help).isSubset(of: Self.options(in: text)))
  }

  @Test(
    "secretd(8) has every option its --help shows, leaves out this machine's memory budget, and man reads it without a warning"
  )
  func secretdPage() throws {
    let page = try Self.output("secretd", ["--manual"])
    let (text, warnings) = try Self.rendered(page)
    #expect(warnings.isEmpty, "\(warnings)")
    #expect(text.contains("SECRETD(8)"))
    let help = try Self.output("secretd", ["--help"])
    let options = Self.options(in: help)
    #expect(options.contains("--max-memory") && options.count >= 15, "\(options.sorted())")
    #expect(options.subtracting(Self.options(in: text)).isEmpty, "\(options.subtracting(Self.options(in: text)))")
    let words = { (text: String) in text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    #expect(words(help).contains("from RLIMIT_MEMLOCK, here "), "--help gives this machine's budget")
    #expect(words(text).contains("from RLIMIT_MEMLOCK)"))
    #expect(!words(text).contains(", here "), "the page, made once for every machine, gives the build machine's budget")
  }

  @Test("roff's special characters in help texts come out as written")
  func escaping() throws {
    let (text, _) = try Self.rendered(try Self.output("secretctl", ["--manual"]))
    // Dashes stay ASCII (copied options work), and `code` loses its backquotes.
    #expect(text.contains("--collection"))
    #expect(!text.contains("\u{2010}") && !text.contains("\u{2212}"))
    #expect(text.contains("secretctl --manual | man -l -"))
    #expect(!text.contains("`"))
  }
}
