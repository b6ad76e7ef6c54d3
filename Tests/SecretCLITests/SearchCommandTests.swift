import Foundation
import SecretClient
import SecretTestSupport
import Testing

@testable import SecretCLI

@Suite("search: what people see")
struct SearchCommandTests {
  @Test(arguments: Provider.all)
  func labelsAndAttributesReachATerminalWithTheirControlCharactersEscaped(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      // What a hostile remote could plant through a git URL's path, or any client through a label.
      try await instance.client().write(
        SecretValue("x"), attributes: ["service": "planted", "object": "repo\u{1b}[2J\u{1b}]0;owned\u{07}"],
        label: "Git: \u{1b}[31mred\u{9b}1m \u{202e}gnp.exe\nnext line")
      let search = try PseudoTerminalChild(
        try secretctlPath(), ["search", "service=planted"], environment: instance.environment)
      #expect(search.wait() == 0)
      #expect(
        search.output.contains("label = Git: \\x1b[31mred\\u{9b}1m \\u{202e}gnp.exe\\nnext line"), "\(search.output)")
      #expect(search.output.contains("attribute.object = repo\\x1b[2J\\x1b]0;owned\\x07"), "\(search.output)")
      for control: Unicode.Scalar in ["\u{1b}", "\u{07}", "\u{9b}", "\u{202e}"] {
        #expect(
          !search.output.unicodeScalars.contains(control), "U+\(String(control.value, radix: 16)) reached the terminal")
      }
      // Positive control: --json gives the attributes exactly (escaped as JSON, not altered).
      let json = try secretctl(instance, ["search", "--json", "service=planted"])
      let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
      #expect((items.first?["attributes"] as? [String: String])?["object"] == "repo\u{1b}[2J\u{1b}]0;owned\u{07}")
    }
  }

  @Test(arguments: Provider.all)
  func aSearchThatMatchesNothingSaysSoOnATerminal(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let onTerminal = try PseudoTerminalChild(
        try secretctlPath(), ["search", "service=nothing"], environment: instance.environment)
      #expect(onTerminal.wait() == 1)
      #expect(onTerminal.output.contains("secretctl: no items match service=nothing"), "\(onTerminal.output)")
      // Piped, as scripts read it: no output, the exit status says it.
      let piped = try secretctl(instance, ["search", "service=nothing"])
      #expect(piped.status == 1 && piped.stdout.isEmpty && piped.stderr.isEmpty)
    }
  }

  @Test func anExpiringItemShowsItsDateAndTheTimeLeft() async throws {
    try await withProvider(.secretd) { instance in
      #expect(try secretctl(instance, ["set", "--ttl", "2h", "ttl", "a"], input: "token").status == 0)
      let search = try secretctl(instance, ["search", "service=ttl"])
      let line = try #require(search.stdoutText.split(separator: "\n").first { $0.hasPrefix("expires = ") })
      let item = try #require(try await instance.client().search(["service": "ttl"]).first)
      let expiry = try #require(item.attributes["xdg:expires"].flatMap { Double($0) })
      #expect(line.hasPrefix("expires = \(iso8601(Date(timeIntervalSince1970: expiry))) (in "), "\(line)")
      #expect(line.hasSuffix("(in 2h)") || line.hasSuffix("(in 1h 59m)"), "\(line)")
      let json = try secretctl(instance, ["search", "--json", "service=ttl"])
      let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
      #expect(items.first?["expires"] as? String == iso8601(Date(timeIntervalSince1970: expiry)))
      // An item without expiry shows none.
      _ = try secretctl(instance, ["set", "plain", "a"], input: "token")
      #expect(try secretctl(instance, ["search", "service=plain"]).stdoutText.contains("expires") == false)
    }
  }

  @Test(arguments: [
    (0, "0s"), (45, "45s"), (60, "1m"), (3_599, "59m 59s"), (7_200, "2h"), (7_140, "1h 59m"), (90_061, "1d 1h"),
    (172_800, "2d"),
  ])
  func durationsAreSpokenInTheirTwoLargestUnits(seconds: Int64, spoken: String) {
    #expect(SearchCommand.spokenDuration(seconds) == spoken)
  }

  @Test func anExpiryInThePastSaysHowLongAgo() {
    #expect(SearchCommand.describeExpiry(1_000, now: 1_300) == "1970-01-01T00:16:40Z (expired 5m ago)")
  }
}
