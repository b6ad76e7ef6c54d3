import Foundation

/// A value's JSON, and the errors that say which item did not decode without quoting it.
enum SecretJSON {
  /// Keys sorted: the same value is always the same bytes, whichever process writes it, so a
  /// store that compares what it wrote with what it reads sees no change where there is none.
  static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8]? {
    guard !isNone(value) else { return nil }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return Array(try encoder.encode(value))
  }

  static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8], address: SecretItemAddress) throws -> Value
  {
    do {
      return try JSONDecoder().decode(Value.self, from: Data(bytes))
    } catch {
      throw SecretKeyError.undecodable(address, reason: reason(error))
    }
  }

  /// The value of an item a query found, or why it is not one.
  static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8], path: String) -> Result<
    Value, SecretKeyError
  > {
    Result { try JSONDecoder().decode(Value.self, from: Data(bytes)) }
      .mapError { .undecodableItem(path: path, reason: reason($0)) }
  }

  /// Why the bytes did not decode, naming only the declared type's fields: JSONDecoder's own
  /// text quotes the bytes it choked on, and those are the secret.
  static func reason(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "not JSON of the expected type" }
    func at(_ context: DecodingError.Context) -> String {
      context.codingPath.isEmpty ? "" : " at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
    }
    switch error {
    case .typeMismatch(let type, let context): return "expected \(type)\(at(context))"
    case .valueNotFound(let type, let context): return "missing \(type)\(at(context))"
    case .keyNotFound(let key, let context): return "missing key \(key.stringValue)\(at(context))"
    case .dataCorrupted(let context): return "not valid JSON\(at(context))"
    @unknown default: return "not JSON of the expected type"
    }
  }

  /// Whether `value` is an optional holding nothing: writing it deletes the item.
  private static func isNone<Value>(_ value: Value) -> Bool {
    let mirror = Mirror(reflecting: value)
    return mirror.displayStyle == .optional && mirror.children.isEmpty
  }
}
