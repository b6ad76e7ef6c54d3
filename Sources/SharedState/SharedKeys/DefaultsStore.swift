public import Foundation
import Synchronization
import SystemCalls

/// A value as `UserDefaults` keeps it: the property-list kinds `.appStorage` reads and writes.
public enum DefaultsValue: Equatable, Sendable, CustomStringConvertible {
  /// A Boolean.
  case bool(Bool)
  /// An integer.
  case integer(Int)
  /// A floating-point number (`Double` keys also read `integer`).
  case double(Double)
  /// A string; `URL` keys and `String` raw values are stored this way too.
  case string(String)
  /// An array whose elements are all strings.
  case strings([String])
  /// Bytes; `Codable` values are stored this way too, as JSON.
  case data(Data)
  /// A date.
  case date(Date)
  /// A value of another kind, which no `.appStorage` type reads (kept as its description).
  case other(String)

  /// The value `UserDefaults` returned, sorted into a kind.
  init(_ object: Any) {
    switch object {
    case let value as Bool where type(of: object) == Bool.self: self = .bool(value)
    case let value as Int where type(of: object) == Int.self: self = .integer(value)
    case let value as Double: self = .double(value)
    case let value as String: self = .string(value)
    case let value as Data: self = .data(value)
    case let value as Date: self = .date(value)
    case let value as [Any?]:
      let strings = value.compactMap { $0 as? String }
      self = strings.count == value.count ? .strings(strings) : .other(String(describing: object))
    default: self = .other(String(describing: object))
    }
  }

  /// What to hand to `UserDefaults.set(_:forKey:)`.
  var object: Any {
    switch self {
    case .bool(let value): value
    case .integer(let value): value
    case .double(let value): value
    case .string(let value): value
    case .strings(let value): value
    case .data(let value): value
    case .date(let value): value
    case .other(let value): value
    }
  }

  /// The kind of value (and the value itself for Booleans, numbers and dates), for error
  /// messages; the text of strings and the bytes of data are never shown.
  public var description: String {
    switch self {
    case .bool(let value): "a Bool (\(value))"
    case .integer(let value): "an Int (\(value))"
    case .double(let value): "a Double (\(value))"
    case .string: "a String"
    case .strings(let value): "a list of \(value.count) strings"
    case .data(let value): "data (\(value.count) bytes)"
    case .date(let value): "a date (\(value))"
    case .other: "a value of another kind"
    }
  }
}

/// The defaults behind `.appStorage` keys: read, write, remove and watch one suite's entries.
///
/// ``standard`` and ``suite(_:)`` are `UserDefaults`, which Foundation on Linux keeps in
/// `$XDG_CONFIG_HOME/NAME.plist` (`~/.config`); they are watched through that file, so values
/// written by other processes arrive live. ``inMemory`` (or an ``InMemoryDefaults`` you keep) is
/// for tests.
public struct DefaultsStore: Sendable {
  /// The entry's value; nil when there is none.
  public var read: @Sendable (String) -> DefaultsValue?
  /// Sets the entry and writes the suite out.
  public var write: @Sendable (String, DefaultsValue) -> Void
  /// Removes the entry and writes the suite out.
  public var remove: @Sendable (String) -> Void
  /// Calls the handler when entries may have changed, in this process or another; nil when
  /// changes made elsewhere cannot be seen.
  public var watch: @Sendable (_ key: String, _ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription?

  final class Identity: Sendable {}
  let identity: any AnyObject & Sendable

  /// Creates a store from its operations (each value is a distinct store).
  public init(
    read: @escaping @Sendable (String) -> DefaultsValue?,
    write: @escaping @Sendable (String, DefaultsValue) -> Void,
    remove: @escaping @Sendable (String) -> Void,
    watch: @escaping @Sendable (String, @escaping @Sendable () -> Void) throws -> SharedSubscription?
  ) {
    self.init(identity: Identity(), read: read, write: write, remove: remove, watch: watch)
  }

  init(
    identity: any AnyObject & Sendable,
    read: @escaping @Sendable (String) -> DefaultsValue?,
    write: @escaping @Sendable (String, DefaultsValue) -> Void,
    remove: @escaping @Sendable (String) -> Void,
    watch: @escaping @Sendable (String, @escaping @Sendable () -> Void) throws -> SharedSubscription?
  ) {
    self.identity = identity
    self.read = read
    self.write = write
    self.remove = remove
    self.watch = watch
  }

  /// `UserDefaults.standard`: this program's own defaults (`~/.config/PROGRAM.plist`).
  public static let standard = userDefaults(
    SendableDefaults(.standard), file: plistPath(ProcessInfo.processInfo.processName))

  /// A named suite, `UserDefaults(suiteName:)`, shared by every program that names it
  /// (`~/.config/NAME.plist`).
  public static func suite(_ name: String) -> DefaultsStore {
    suites.withLock { suites in
      if let existing = suites[name] { return existing }
      let store = userDefaults(SendableDefaults(UserDefaults(suiteName: name) ?? .standard), file: plistPath(name))
      suites[name] = store
      return store
    }
  }

  /// Any `UserDefaults`: one store per object, so keys given the same object share a value.
  /// `.standard` and named suites are watched through their file (changes made by other
  /// processes arrive live); for other objects, on the value's next load.
  public static func userDefaults(_ defaults: UserDefaults) -> DefaultsStore {
    userDefaults(defaults, key: nil, reportIssue: { _ in })
  }

  /// ``userDefaults(_:)``, reporting a second object for a suite an earlier one named: keys
  /// given different objects do not share a value.
  static func userDefaults(
    _ defaults: UserDefaults, key: String?, reportIssue: @Sendable (String) -> Void
  ) -> DefaultsStore {
    if defaults === UserDefaults.standard { return standard }
    let suite = suiteName(of: defaults)
    let (store, conflicting) = objects.withLock { objects -> (DefaultsStore, Bool) in
      let id = ObjectIdentifier(defaults)
      let conflicting = suite.map { name in objects.suites[name].map { $0 != id } ?? false } ?? false
      if let suite, objects.suites[suite] == nil { objects.suites[suite] = id }
      if let existing = objects.stores[id] { return (existing, conflicting) }
      // Kept for the life of the process, with its object: an identifier is never reused.
      let made = userDefaults(SendableDefaults(defaults), file: suite.map(plistPath))
      objects.stores[id] = made
      return (made, conflicting)
    }
    if conflicting, let suite {
      let key = key.map { ".appStorage(\(String(reflecting: $0)))" } ?? "A key"
      reportIssue(
        "\(key) was given a second UserDefaults object for the suite \(String(reflecting: suite)). Keys given "
          + "different objects for one suite do not share a value and do not see each other's changes: make the "
          + "suite's UserDefaults once (a static let) and give that object to every key.")
    }
    return store
  }

  /// The suite a `UserDefaults` object was made for, from Foundation's stored property
  /// (Foundation on Linux has no public way to ask); nil for the standard defaults.
  private static func suiteName(of defaults: UserDefaults) -> String? {
    Mirror(reflecting: defaults).children.first { $0.label == "suite" }.flatMap { $0.value as? String }
  }

  /// The stores made for `UserDefaults` objects, and which object named each suite first.
  private static let objects = Mutex<(stores: [ObjectIdentifier: DefaultsStore], suites: [String: ObjectIdentifier])>(
    ([:], [:]))

  /// A new, empty store in memory, for tests (keep an ``InMemoryDefaults`` to look inside it).
  public static var inMemory: DefaultsStore { InMemoryDefaults().store }

  private static let suites = Mutex<[String: DefaultsStore]>([:])

  /// Where Foundation keeps a suite on Linux.
  static func plistPath(_ name: String) -> String {
    let environment = ProcessInfo.processInfo.environment
    let home = environment["HOME"] ?? NSHomeDirectory()
    let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
    return "\(config)/\(name).plist"
  }

  private static func userDefaults(_ defaults: SendableDefaults, file: String?) -> DefaultsStore {
    DefaultsStore(
      identity: defaults,
      read: { key in
        // Picks up what other processes wrote to the file since.
        defaults.value.synchronize()
        return defaults.value.object(forKey: key).map(DefaultsValue.init)
      },
      write: { key, value in
        defaults.value.set(value.object, forKey: key)
        defaults.value.synchronize()
      },
      remove: { key in
        defaults.value.removeObject(forKey: key)
        defaults.value.synchronize()
      },
      watch: { _, onChange in
        guard let file else { return nil }
        // The folder UserDefaults would make on its first write, made now so that a program
        // that only reads sees the first write of another.
        try? Files.makeDirectories(Files.split(file).directory)
        return try FileWatcher.watch(path: file, onChange: onChange)
      })
  }
}

/// A `UserDefaults` that may be used from any thread.
final class SendableDefaults: @unchecked Sendable {
  // SAFETY: Foundation documents UserDefaults as thread-safe (its methods lock internally); this
  // box only carries the reference across threads and never mutates it.
  let value: UserDefaults
  init(_ value: UserDefaults) { self.value = value }
}

/// Defaults in memory for tests: starts empty, counts writes, and lets a test play "another
/// process" with ``setValue(_:forKey:)``, which notifies watchers at once.
public final class InMemoryDefaults: Sendable {
  private struct State {
    var values: [String: DefaultsValue] = [:]
    var writeCount = 0
    var watchers: [UInt64: (key: String, onChange: @Sendable () -> Void)] = [:]
    var nextWatcher: UInt64 = 0
  }

  private let state = Mutex(State())

  /// Creates defaults holding `values`.
  public init(_ values: [String: DefaultsValue] = [:]) {
    state.withLock { $0.values = values }
  }

  /// The ``DefaultsStore`` to put in a ``SharedEnvironment``.
  public var store: DefaultsStore {
    DefaultsStore(
      identity: self,
      read: { [self] key in value(forKey: key) },
      write: { [self] key, value in
        state.withLock {
          $0.values[key] = value
          $0.writeCount += 1
        }
        notify(key)
      },
      remove: { [self] key in
        state.withLock {
          $0.values[key] = nil
          $0.writeCount += 1
        }
        notify(key)
      },
      watch: { [self] key, onChange in
        let id = state.withLock { state in
          state.nextWatcher += 1
          state.watchers[state.nextWatcher] = (key, onChange)
          return state.nextWatcher
        }
        return SharedSubscription { [weak self] in _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) } }
      })
  }

  /// An entry's value.
  public func value(forKey key: String) -> DefaultsValue? { state.withLock { $0.values[key] } }

  /// Every key that holds a value.
  public var keys: [String] { state.withLock { $0.values.keys.sorted() } }

  /// How many times keys wrote or removed entries.
  public var writeCount: Int { state.withLock { $0.writeCount } }

  /// Sets (or removes, with nil) an entry as another process would, and notifies watchers.
  public func setValue(_ value: DefaultsValue?, forKey key: String) {
    state.withLock { $0.values[key] = value }
    notify(key)
  }

  private func notify(_ key: String) {
    let handlers = state.withLock { $0.watchers.values.filter { $0.key == key }.map(\.onChange) }
    for handler in handlers { handler() }
  }
}
