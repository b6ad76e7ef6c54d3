public import Foundation

// `.appStorage`: small values in `UserDefaults`, as swift-sharing keeps them on Apple systems.
// One overload per kind of value, as there: Bool, Int, Double, String, [String], URL, Data,
// Date, RawRepresentable with Int or String raw values, Codable values (as JSON data), and the
// optional of each. A write is made at once; nil removes the entry.

extension SharedReaderKey {
  /// A `Bool` in `UserDefaults`.
  ///
  /// ```swift
  /// @Shared(.appStorage("hasSeenWelcome")) var hasSeenWelcome = false
  /// ```
  ///
  /// Writes go to the defaults at once; values written by other processes arrive live (for the
  /// standard defaults and named suites: see ``DefaultsStore``). An entry of another type is a
  /// load error; it is kept, and copied to `KEY.undecodable-TIME` before anything overwrites it.
  ///
  /// - Parameters:
  ///   - key: The entry's name.
  ///   - store: The defaults; the current ``SharedEnvironment``'s ``SharedEnvironment/defaults``
  ///     (`UserDefaults.standard` live, empty memory in tests) when nil.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Bool> {
    AppStorageKey(key, store, .bool)
  }

  /// An `Int` in `UserDefaults`.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Int> {
    AppStorageKey(key, store, .int)
  }

  /// A `Double` in `UserDefaults`.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Double> {
    AppStorageKey(key, store, .double)
  }

  /// A `String` in `UserDefaults`.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<String> {
    AppStorageKey(key, store, .string)
  }

  /// A `[String]` in `UserDefaults`.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self
  where Self == AppStorageKey<[String]> {
    AppStorageKey(key, store, .strings)
  }

  /// A `URL` in `UserDefaults`, kept as its absolute string.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<URL> {
    AppStorageKey(key, store, .url)
  }

  /// `Data` in `UserDefaults`.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Data> {
    AppStorageKey(key, store, .data)
  }

  /// A `Date` in `UserDefaults`.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Date> {
    AppStorageKey(key, store, .date)
  }

  /// A `Codable` value in `UserDefaults`, kept as JSON data.
  @_disfavoredOverload
  public static func appStorage<Value: Codable & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Value> {
    AppStorageKey(key, store, .json())
  }

  /// A value whose raw value is an `Int`, in `UserDefaults`.
  public static func appStorage<Value: RawRepresentable<Int> & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Value> {
    AppStorageKey(key, store, .raw(.int))
  }

  /// A value whose raw value is a `String`, in `UserDefaults`.
  public static func appStorage<Value: RawRepresentable<String> & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Value> {
    AppStorageKey(key, store, .raw(.string))
  }

  /// An optional `Bool` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Bool?> {
    AppStorageKey(key, store, .optional(.bool))
  }

  /// An optional `Int` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Int?> {
    AppStorageKey(key, store, .optional(.int))
  }

  /// An optional `Double` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self
  where Self == AppStorageKey<Double?> {
    AppStorageKey(key, store, .optional(.double))
  }

  /// An optional `String` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self
  where Self == AppStorageKey<String?> {
    AppStorageKey(key, store, .optional(.string))
  }

  /// An optional `[String]` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self
  where Self == AppStorageKey<[String]?> {
    AppStorageKey(key, store, .optional(.strings))
  }

  /// An optional `URL` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<URL?> {
    AppStorageKey(key, store, .optional(.url))
  }

  /// Optional `Data` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Data?> {
    AppStorageKey(key, store, .optional(.data))
  }

  /// An optional `Date` in `UserDefaults`; nil removes the entry.
  public static func appStorage(_ key: String, store: UserDefaults? = nil) -> Self where Self == AppStorageKey<Date?> {
    AppStorageKey(key, store, .optional(.date))
  }

  /// An optional `Codable` value in `UserDefaults`, kept as JSON data; nil removes the entry.
  @_disfavoredOverload
  public static func appStorage<Value: Codable & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Value?> {
    AppStorageKey(key, store, .optional(.json()))
  }

  /// An optional value whose raw value is an `Int`; nil removes the entry.
  public static func appStorage<Value: RawRepresentable<Int> & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Value?> {
    AppStorageKey(key, store, .optional(.raw(.int)))
  }

  /// An optional value whose raw value is a `String`; nil removes the entry.
  public static func appStorage<Value: RawRepresentable<String> & Sendable>(
    _ key: String, store: UserDefaults? = nil
  ) -> Self where Self == AppStorageKey<Value?> {
    AppStorageKey(key, store, .optional(.raw(.string)))
  }
}

/// The key behind every `appStorage(_:store:)`: a ``PersistentValue`` over one defaults entry,
/// written at once (no window).
///
/// Its identity is the entry's name and the defaults it lives in.
///
/// - Loading reads the entry: the declared default when it is missing,
///   ``AppStorageError/wrongType(key:expected:found:)`` when it holds something this type cannot
///   read (the entry is kept). The first load reads where the first handle is declared; `load()`
///   reads off the cooperative pool.
/// - Subscribing watches the entry for changes made elsewhere: for ``DefaultsStore/standard``
///   and suites, through their plist file; the key's own writes do not come back as changes.
/// - Saving writes the value to the defaults at once, for mutations and `save()` alike; an
///   optional's `nil` removes the entry. Contents this type could not read are first copied to
///   `NAME.undecodable-TIME`.
public struct AppStorageKey<Value: Sendable>: PersistentKey, CustomStringConvertible {
  let core: PersistentValue<DefaultsEntry, Value>

  init(_ key: String, _ defaults: UserDefaults?, _ coding: DefaultsCoding<Value>) {
    let environment = SharedEnvironment.current
    let store = defaults.map { DefaultsStore.userDefaults($0, key: key, reportIssue: environment.reportIssue) }
    let entry = DefaultsEntry(key: key, defaults: store ?? environment.defaults)
    core = PersistentValue(
      store: entry, window: .zero,
      decode: { stored in
        let decoded: Value?
        do { decoded = try coding.decode(stored) } catch {
          throw AppStorageError.undecodable(key: key, expected: "\(Value.self)", reason: "\(error)")
        }
        guard let decoded else {
          throw AppStorageError.wrongType(key: key, expected: "\(Value.self)", found: stored.description)
        }
        return decoded
      },
      encode: coding.encode, environment: environment)
  }

  /// The core that keeps the value.
  public var persistence: PersistentValue<some PersistentStore, Value> { core }

  /// The entry's name and its defaults.
  public struct ID: Hashable, Sendable {
    let key: String
    let defaults: ObjectIdentifier
  }

  /// The entry's name and its defaults: keys of the same value type with equal ids share one
  /// value.
  public var id: ID { ID(key: core.store.key, defaults: ObjectIdentifier(core.store.defaults.identity)) }

  /// `.appStorage("NAME")`, for messages and debugging.
  public var description: String { ".appStorage(\(String(reflecting: core.store.key)))" }
}

/// Errors of ``AppStorageKey``.
public enum AppStorageError: Error, CustomStringConvertible, Sendable {
  /// The entry holds a value of another type. It is left as it is; before anything overwrites
  /// it, it is copied to `KEY.undecodable-TIME`.
  case wrongType(key: String, expected: String, found: String)
  /// The entry holds data that is not the JSON of the expected `Codable` type; kept like a value
  /// of the wrong type.
  case undecodable(key: String, expected: String, reason: String)

  /// What the entry holds, what was expected, and what to do about it.
  public var description: String {
    switch self {
    case .wrongType(let key, let expected, let found):
      "The defaults entry \(String(reflecting: key)) holds \(found), not \(expected). " + Self.kept(key)
    case .undecodable(let key, let expected, let reason):
      "The defaults entry \(String(reflecting: key)) holds data that is not the JSON of \(expected) (\(reason)). "
        + Self.kept(key)
    }
  }

  private static func kept(_ key: String) -> String {
    "It is left as it is; before anything is written over it, it will be copied to "
      + "\(String(reflecting: key + ".undecodable-<time>")). Remove the entry or change the value to replace it."
  }
}
