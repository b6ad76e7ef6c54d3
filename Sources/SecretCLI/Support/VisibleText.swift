// Text from the store (labels, attribute names and values, collection labels) shown to a
// person: anyone who can create an item chooses it, and a git `path` taken from a remote URL can
// carry terminal escapes that retitle the window, move the cursor or hide what follows.

extension String {
  /// The text with every control character shown as an escape: `\n`, `\t`, `\r`, `\x1b` for
  /// C0 controls and DEL, `\u{9b}` for C1 controls, and the same for the bidirectional
  /// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder what a terminal shows.
  var visible: String {
    guard unicodeScalars.contains(where: Self.needsEscape) else { return self }
    var result = ""
    for scalar in unicodeScalars {
      guard Self.needsEscape(scalar) else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      case _ where scalar.value < 0x80: result += "\\x" + Self.hex(scalar.value, digits: 2)
      default: result += "\\u{" + Self.hex(scalar.value, digits: 1) + "}"
      }
    }
    return result
  }

  private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }

  private static func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: Swift.max(0, digits - text.count)) + text
  }
}
