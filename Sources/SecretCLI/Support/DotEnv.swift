// Env files as dotenv tools write them: `NAME=value` lines, `export NAME=value`, `#` comments
// (whole lines, or after a space in an unquoted value), 'single quotes' taken literally,
// "double quotes" with \n, \t, \", \\ escapes and line breaks. No ${VAR} interpolation.
enum DotEnv {
  struct Entry: Equatable {
    var name: String
    var value: String
  }

  /// The entries of `text`, in order; `source` names the file in errors.
  static func parse(_ text: String, source: String) throws(CLIError) -> [Entry] {
    var entries: [Entry] = []
    // Split on the newline byte: "\r\n" is one Character, which a split on "\n" never cuts.
    var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
      Substring(String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0, as: UTF8.self))
    }[...]
    var lineNumber = 0
    while let raw = lines.popFirst() {
      lineNumber += 1
      var line = trimmed(raw)
      if line.isEmpty || line.hasPrefix("#") { continue }
      if line.hasPrefix("export ") || line.hasPrefix("export\t") { line = trimmed(line.dropFirst(7)) }
      guard let equals = line.firstIndex(of: "=") else {
        throw .usage("\(source):\(lineNumber): expected NAME=VALUE")
      }
      let name = String(trimmed(line[..<equals]))
      guard EnvironmentName.isValid(name) else {
        throw .usage("\(source):\(lineNumber): the name before = is not a valid environment variable name")
      }
      var value = trimmed(line[line.index(after: equals)...])
      if value.hasPrefix("\"") {
        // A double-quoted value may go on over the next lines, up to its closing quote.
        while !closesDoubleQuote(value), let next = lines.popFirst() {
          lineNumber += 1
          value = value + "\n" + next
        }
      }
      entries.append(Entry(name: name, value: try unquoted(value, at: "\(source):\(lineNumber)")))
    }
    return entries
  }

  private static func unquoted(_ value: Substring, at place: String) throws(CLIError) -> String {
    if value.hasPrefix("'") {
      guard let end = value.dropFirst().firstIndex(of: "'") else { throw .usage("\(place): no closing '") }
      return String(value[value.index(after: value.startIndex)..<end])
    }
    if value.hasPrefix("\"") {
      guard closesDoubleQuote(value) else { throw .usage("\(place): no closing \"") }
      return unescaped(value.dropFirst())
    }
    // Unquoted: a comment starts at " #".
    let cut = value.utf8.firstRange(matching: " #".utf8)?.lowerBound ?? value.endIndex
    return String(trimmed(value[..<cut]))
  }

  /// Whether a value that opens with `"` has its closing quote (one not escaped).
  private static func closesDoubleQuote(_ value: Substring) -> Bool {
    var escaped = false
    for character in value.dropFirst() {
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "\"" {
        return true
      }
    }
    return false
  }

  /// The text up to the closing quote, escapes applied.
  private static func unescaped(_ body: Substring) -> String {
    var result = ""
    var escaped = false
    for character in body {
      if escaped {
        switch character {
        case "n": result.append("\n")
        case "t": result.append("\t")
        case "r": result.append("\r")
        default: result.append(character)
        }
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "\"" {
        break
      } else {
        result.append(character)
      }
    }
    return result
  }

  private static func trimmed(_ text: Substring) -> Substring {
    let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
    else { return text[text.endIndex...] }
    return text[first...last]
  }
}

/// Environment variable names as shells accept them: a letter or `_`, then letters, digits, `_`.
enum EnvironmentName {
  static func isValid(_ name: String) -> Bool {
    guard let first = name.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
    return name.utf8.allSatisfy {
      $0 == UInt8(ascii: "_") || isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
    }
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
  }
}
