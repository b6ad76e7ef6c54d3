/// A key paired with the default value every handle uses, so named keys declare it once.
///
/// You do not name this type directly: write `Key.Default` and build it with the static
/// subscript.
///
/// ```swift
/// extension SharedKey where Self == FileStorageKey<Set<Int>>.Default {
///   static var favourites: Self {
///     Self[.fileStorage(URL(filePath: "/var/lib/tool/favourites.json")), default: []]
///   }
/// }
/// @Shared(.favourites) var favourites
/// ```
///
/// It is the same key as the one it wraps: `@Shared(.favourites)`, `@Shared(.favourites) var
/// favourites = [1]` and `@Shared(.fileStorage(url))` with the same URL share one reference.
public struct SharedKeyDefault<Base: SharedReaderKey>: SharedReaderKey {
  /// The wrapped key.
  public let base: Base
  let defaultValue: @Sendable () -> Base.Value

  init(base: Base, defaultValue: @escaping @Sendable () -> Base.Value) {
    self.base = base
    self.defaultValue = defaultValue
  }

  /// Pairs a key with a default value.
  ///
  /// - Parameters:
  ///   - key: The key that stores the value.
  ///   - value: The value used while nothing is stored.
  public static subscript(
    _ key: Base, default value: @autoclosure @escaping @Sendable () -> Base.Value
  ) -> Self {
    Self(base: key, defaultValue: value)
  }

  /// The wrapped key's identity.
  public var id: Base.ID { base.id }

  /// The default value.
  public var initialValue: Base.Value { defaultValue() }

  /// Loads through the wrapped key.
  public func load(context: LoadContext<Base.Value>, continuation: LoadContinuation<Base.Value>) {
    base.load(context: context, continuation: continuation)
  }

  /// Subscribes through the wrapped key.
  public func subscribe(
    context: LoadContext<Base.Value>, subscriber: SharedSubscriber<Base.Value>
  ) -> SharedSubscription {
    base.subscribe(context: context, subscriber: subscriber)
  }
}

extension SharedKeyDefault: SharedKey where Base: SharedKey {
  /// Saves through the wrapped key.
  public func save(_ value: Base.Value, context: SaveContext, continuation: SaveContinuation) {
    base.save(value, context: context, continuation: continuation)
  }
}

extension SharedKeyDefault: CustomStringConvertible {
  /// The wrapped key and the default, for messages and debugging.
  public var description: String { "\(Base.self).Default[\(base), default: \(initialValue)]" }
}

extension SharedKeyDefault: WrappingKey {
  var wrappedKey: any SharedReaderKey { base }
}
