// A small JSON writer for `--json`: keys keep the order the command gives them, so output is
// stable and diffable, and no encoder's choices (escaped slashes, key order) leak into it.

enum JSON {
  case string(String)
  case number(Int)
  case bool(Bool)
  case null
  case array([JSON])
  case object([(String, JSON)])

  /// Pretty-printed with two spaces, ending in a newline.
  var rendered: String {
    var text = ""
    render(into: &text, indent: "")
    return text + "\n"
  }

  private func render(into text: inout String, indent: String) {
    switch self {
    case .string(let value): Self.quote(value, into: &text)
    case .number(let value): text += String(value)
    case .bool(let value): text += value ? "true" : "false"
    case .null: text += "null"
    case .array(let elements):
      guard !elements.isEmpty else {
        text += "[]"
        return
      }
      text += "[\n"
      for (index, element) in elements.enumerated() {
        text += indent + "  "
        element.render(into: &text, indent: indent + "  ")
        text += index == elements.count - 1 ? "\n" : ",\n"
      }
      text += indent + "]"
    case .object(let members):
      guard !members.isEmpty else {
        text += "{}"
        return
      }
      text += "{\n"
      for (index, (key, value)) in members.enumerated() {
        text += indent + "  "
        Self.quote(key, into: &text)
        text += ": "
        value.render(into: &text, indent: indent + "  ")
        text += index == members.count - 1 ? "\n" : ",\n"
      }
      text += indent + "}"
    }
  }

  private static func quote(_ value: String, into text: inout String) {
    text += "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: text.unicodeScalars.append(scalar)
      }
    }
    text += "\""
  }
}

extension JSON {
  static func string(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

  static func attributes(_ attributes: [String: String]) -> JSON {
    .object(attributes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
  }
}
