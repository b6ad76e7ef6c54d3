/// How a type is written in descriptions: without module names, and with Swift's sugar for
/// optionals, arrays and dictionaries (`Shared<[String: Int?]>`, not
/// `SharedState.Shared<Swift.Dictionary<Swift.String, Swift.Optional<Swift.Int>>>`).
func displayName(of type: Any.Type) -> String {
  var parser = TypeNameParser(withoutLocalContexts(_typeName(type, qualified: true)))
  return parser.rest()
}

/// `_typeName` names a type declared inside a function `(unknown context at $7f…).Name`.
private func withoutLocalContexts(_ name: String) -> String {
  var result = Substring(name)
  while let start = result.range(of: "(unknown context at "), let end = result[start.upperBound...].range(of: ").") {
    result = result[..<start.lowerBound] + result[end.upperBound...]
  }
  return String(result)
}

/// Rewrites a qualified type name, one generic type at a time.
private struct TypeNameParser {
  private let characters: [Character]
  private var position = 0

  init(_ name: String) { characters = Array(name) }

  /// The rest of the name, rewritten.
  mutating func rest() -> String {
    var output = ""
    while position < characters.count {
      if isNameCharacter(characters[position]) {
        output += genericType()
      } else {
        output.append(characters[position])
        position += 1
      }
    }
    return output
  }

  /// A dotted name with its generic arguments, if any.
  private mutating func genericType() -> String {
    var path = ""
    while position < characters.count, isNameCharacter(characters[position]) || characters[position] == "." {
      path.append(characters[position])
      position += 1
    }
    var arguments: [String] = []
    if position < characters.count, characters[position] == "<" {
      position += 1
      arguments.append(argument())
      while position < characters.count, characters[position] == "," {
        position += 1
        while position < characters.count, characters[position] == " " { position += 1 }
        arguments.append(argument())
      }
      position += 1  // ">"
    }
    switch (path, arguments.count) {
    case ("Swift.Optional", 1): return arguments[0] + "?"
    case ("Swift.Array", 1): return "[\(arguments[0])]"
    case ("Swift.Dictionary", 2): return "[\(arguments[0]): \(arguments[1])]"
    default:
      let components = path.split(separator: ".", omittingEmptySubsequences: false)
      let name = components.count > 1 ? components.dropFirst().joined(separator: ".") : path
      return arguments.isEmpty ? name : "\(name)<\(arguments.joined(separator: ", "))>"
    }
  }

  /// One generic argument: everything up to the `,` or `>` that ends it at this depth.
  private mutating func argument() -> String {
    var output = ""
    var depth = 0
    while position < characters.count {
      let character = characters[position]
      if character == "-", position + 1 < characters.count, characters[position + 1] == ">" {
        output += "->"
        position += 2
        continue
      }
      if depth == 0, character == "," || character == ">" { break }
      if isNameCharacter(character) {
        output += genericType()
        continue
      }
      if character == "(" || character == "[" { depth += 1 }
      if character == ")" || character == "]" { depth -= 1 }
      output.append(character)
      position += 1
    }
    return output
  }

  private func isNameCharacter(_ character: Character) -> Bool {
    character.isLetter || character.isNumber || character == "_" || character == "$"
  }
}
