// A small JSON writer for `--json`: keys keep the order the command gives them, so output is
// stable and diffable, and no encoder's choices (escaped slashes, key order) leak into it. A
// secret is written into memory that is wiped when released, never into a String.
import SecretClient

enum JSON {
  case string(String)
  case number(Int)
  case bool(Bool)
  case null
  case array([JSON])
  case object([(String, JSON)])
  /// Secret bytes that are UTF-8, as a string.
  case secretText(SecretBytes)
  /// Secret bytes of any kind, as a base64 string.
  case secretBase64(SecretBytes)

  /// Pretty-printed with two spaces, ending in a newline.
  var rendered: String { renderedBytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

  /// ``rendered``, in memory that is wiped when released: what holds a secret.
  var renderedBytes: SecretBytes {
    let output = SecretBytes()
    render(into: output, indent: "")
    output.append(UInt8(ascii: "\n"))
    return output
  }

  private func render(into output: SecretBytes, indent: String) {
    switch self {
    case .string(let value): Self.quote(value.unicodeScalars, into: output)
    case .number(let value): output.append(contentsOf: String(value).utf8)
    case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
    case .null: output.append(contentsOf: "null".utf8)
    case .secretText(let bytes):
      bytes.withUnsafeBytes { raw in
        var iterator = raw.makeIterator()
        var decoder = UTF8()
        output.append(UInt8(ascii: "\""))
        while case .scalarValue(let scalar) = decoder.decode(&iterator) { Self.escape(scalar, into: output) }
        output.append(UInt8(ascii: "\""))
      }
    case .secretBase64(let bytes):
      output.append(UInt8(ascii: "\""))
      bytes.withUnsafeBytes { raw in base64(raw, emit: output.append) }
      output.append(UInt8(ascii: "\""))
    case .array(let elements):
      guard !elements.isEmpty else { return output.append(contentsOf: "[]".utf8) }
      output.append(contentsOf: "[\n".utf8)
      for (index, element) in elements.enumerated() {
        output.append(contentsOf: (indent + "  ").utf8)
        element.render(into: output, indent: indent + "  ")
        output.append(contentsOf: (index == elements.count - 1 ? "\n" : ",\n").utf8)
      }
      output.append(contentsOf: (indent + "]").utf8)
    case .object(let members):
      guard !members.isEmpty else { return output.append(contentsOf: "{}".utf8) }
      output.append(contentsOf: "{\n".utf8)
      for (index, (key, value)) in members.enumerated() {
        output.append(contentsOf: (indent + "  ").utf8)
        Self.quote(key.unicodeScalars, into: output)
        output.append(contentsOf: ": ".utf8)
        value.render(into: output, indent: indent + "  ")
        output.append(contentsOf: (index == members.count - 1 ? "\n" : ",\n").utf8)
      }
      output.append(contentsOf: (indent + "}").utf8)
    }
  }

  private static func quote(_ scalars: String.UnicodeScalarView, into output: SecretBytes) {
    output.append(UInt8(ascii: "\""))
    for scalar in scalars { escape(scalar, into: output) }
    output.append(UInt8(ascii: "\""))
  }

  private static func escape(_ scalar: Unicode.Scalar, into output: SecretBytes) {
    switch scalar {
    case "\"": output.append(contentsOf: #"\""#.utf8)
    case "\\": output.append(contentsOf: #"\\"#.utf8)
    case "\n": output.append(contentsOf: #"\n"#.utf8)
    case "\r": output.append(contentsOf: #"\r"#.utf8)
    case "\t": output.append(contentsOf: #"\t"#.utf8)
    case _ where scalar.value < 0x20:
      let hex = String(scalar.value, radix: 16)
      output.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
    default: output.append(contentsOf: scalar.utf8)
    }
  }
}

extension JSON {
  static func string(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

  static func attributes(_ attributes: [String: String]) -> JSON {
    .object(attributes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
  }
}
