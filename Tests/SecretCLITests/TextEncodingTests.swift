// The hand-written base64, ISO 8601 and quoting that replaced Foundation in SecretCLI (to keep
// Foundation out of secretctl, which starts faster without it) must print what Foundation did.
import Foundation
import Testing

@testable import SecretCLI

@Suite("Text encodings match Foundation's (pure)")
struct TextEncodingTests {
  @Test func base64MatchesDataForEveryPaddingAndByte() {
    let allBytes = (0...255).map(UInt8.init)
    for length in 0...9 {
      let bytes = Array(allBytes.suffix(length))
      #expect(base64(bytes) == Data(bytes).base64EncodedString())
    }
    #expect(base64(allBytes) == Data(allBytes).base64EncodedString())
    #expect(base64(Array("hunter2".utf8)) == "aHVudGVyMg==")
  }

  @Test(arguments: [0, 1, 59, 86_399, 951_782_400, 1_796_003_604, 4_102_444_799, 253_402_300_799])
  func iso8601MatchesFormatted(seconds: Int) {
    let date = Date(timeIntervalSince1970: TimeInterval(seconds))
    #expect(iso8601(date) == date.formatted(.iso8601))
  }

  @Test func iso8601OfAKnownInstant() {
    #expect(iso8601(Date(timeIntervalSince1970: 1_796_003_684)) == "2026-11-30T01:54:44Z")
  }

  @Test func replacingEveryMatchesReplacingOccurrences() {
    for text in ["", "'", "it's", "a\\'b'\\", "''x''", "naïve 'é'"] {
      #expect(text.replacingEvery("'", with: "'\\''") == text.replacingOccurrences(of: "'", with: "'\\''"))
      #expect(text.replacingEvery("\\", with: "\\\\") == text.replacingOccurrences(of: "\\", with: "\\\\"))
    }
  }
}
