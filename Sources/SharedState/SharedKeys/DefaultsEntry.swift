// The store under `.appStorage`: one defaults entry, and how each kind of value is kept in it.
import Foundation

/// One defaults entry as a ``PersistentStore``.
struct DefaultsEntry: PersistentStore {
  let key: String
  let defaults: DefaultsStore

  var description: String { "defaults entry \(String(reflecting: key))" }

  func read() throws -> DefaultsValue? { defaults.read(key) }
  func write(_ stored: DefaultsValue) throws { defaults.write(key, stored) }
  func delete() throws { defaults.remove(key) }
  func keepCopy(of stored: DefaultsValue, stamp: String) throws {
    defaults.write("\(key).undecodable-\(stamp)", stored)
  }
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    try defaults.watch(key, onChange)
  }
  var isInMemory: Bool { defaults.identity is InMemoryDefaults }
}

/// How one kind of value reads from and writes to a defaults entry.
struct DefaultsCoding<Value: Sendable>: Sendable {
  /// The value, or nil when the entry holds another type; throws when it holds the right type
  /// of entry whose contents do not decode.
  let decode: @Sendable (DefaultsValue) throws -> Value?
  /// The entry's value; nil removes it. Throws when the value cannot be encoded (the entry is
  /// then left alone and the error is the save's).
  let encode: @Sendable (Value) throws -> DefaultsValue?

  static var bool: DefaultsCoding<Bool> {
    .init(decode: { if case .bool(let value) = $0 { value } else { nil } }, encode: { .bool($0) })
  }
  static var int: DefaultsCoding<Int> {
    .init(decode: { if case .integer(let value) = $0 { value } else { nil } }, encode: { .integer($0) })
  }
  static var double: DefaultsCoding<Double> {
    .init(
      decode: {
        switch $0 {
        case .double(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
      },
      encode: { .double($0) })
  }
  static var string: DefaultsCoding<String> {
    .init(decode: { if case .string(let value) = $0 { value } else { nil } }, encode: { .string($0) })
  }
  static var strings: DefaultsCoding<[String]> {
    .init(decode: { if case .strings(let value) = $0 { value } else { nil } }, encode: { .strings($0) })
  }
  /// A file URL is kept as its path, as Foundation's `UserDefaults.set(_:forKey:)` keeps it on
  /// Linux (so `url(forKey:)` reads it back); any other URL as its absolute string. A string
  /// without a scheme is read as a path, as `url(forKey:)` reads it.
  static var url: DefaultsCoding<URL> {
    .init(
      decode: {
        guard case .string(let value) = $0 else { return nil }
        if let url = URL(string: value), url.scheme != nil { return url }
        return URL(fileURLWithPath: NSString(string: value).expandingTildeInPath)
      },
      encode: { url in
        guard url.isFileURL else { return .string(url.absoluteString) }
        return .string(url.hasDirectoryPath && !url.path.hasSuffix("/") ? url.path + "/" : url.path)
      })
  }
  static var data: DefaultsCoding<Data> {
    .init(decode: { if case .data(let value) = $0 { value } else { nil } }, encode: { .data($0) })
  }
  static var date: DefaultsCoding<Date> {
    .init(decode: { if case .date(let value) = $0 { value } else { nil } }, encode: { .date($0) })
  }

  static func json() -> DefaultsCoding<Value> where Value: Codable {
    .init(
      decode: { if case .data(let bytes) = $0 { try JSONDecoder().decode(Value.self, from: bytes) } else { nil } },
      encode: { .data(try JSONEncoder().encode($0)) })
  }

  static func raw(_ coding: DefaultsCoding<Value.RawValue>) -> DefaultsCoding<Value>
  where Value: RawRepresentable, Value.RawValue: Sendable {
    .init(decode: { try coding.decode($0).flatMap(Value.init(rawValue:)) }, encode: { try coding.encode($0.rawValue) })
  }

  static func optional<Wrapped>(_ coding: DefaultsCoding<Wrapped>) -> DefaultsCoding<Wrapped?> {
    .init(decode: { try coding.decode($0).map(Optional.some) }, encode: { try $0.flatMap(coding.encode) })
  }
}
