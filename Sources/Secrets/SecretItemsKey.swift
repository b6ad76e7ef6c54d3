public import SharedState

extension SharedReaderKey {
  /// A live, read-only query: the items of a collection whose attributes include `attributes`,
  /// described (never their secrets) and kept up to date as any process changes them.
  ///
  /// ```swift
  /// @SharedReader(.secretItems(matching: ["service": "github.com"])) var accounts
  /// for account in accounts { print(account.attributes["account"] ?? "?", account.modified) }
  /// ```
  ///
  /// - Items are sorted by label, then by object path.
  /// - A change signalled by the collection is searched at once, and opens a `refreshWindow`:
  ///   every change signalled while it is open is answered by one search when it closes. A lone
  ///   change is seen in the time of one search; 1,000 writes by another process cost a few
  ///   searches, not 1,000. A search whose result equals the last one changes nothing.
  /// - Locked items are listed with ``SecretItemInfo/isLocked`` set; locking or unlocking the
  ///   collection updates the list. An unreachable provider is
  ///   an error in `loadError`, the last value kept; watching starts again after a search
  ///   succeeds (the next `load()`), as ``SecretKey`` does.
  /// - Every declaration of one query (attributes, collection, store) shares one value.
  /// - The items searched are those of the environment's ``SecretKeyStore``; a store that cannot
  ///   search (OpenBao's) makes every search ``SecretKeyError/searchUnsupported``.
  ///
  /// Write through ``SecretKey`` or `SecretClient`: every query the write affects is updated.
  ///
  /// - Parameters:
  ///   - attributes: the attributes every listed item has (all items when empty).
  ///   - collection: the collection searched; the `default` alias unless given.
  ///   - refreshWindow: after a search for a change, how long further change signals are
  ///     gathered before the next search.
  public static func secretItems(
    matching attributes: [String: String] = [:], in collection: CollectionID = .default,
    refreshWindow: Duration = .milliseconds(50)
  ) -> Self where Self == SecretItemsKey.Default {
    Self[SecretItemsKey(attributes, collection, refreshWindow: refreshWindow), default: []]
  }

  /// A live, read-only query that also decodes each item's secret from JSON as `Value`: for
  /// tools that need the values of many items at once.
  ///
  /// ```swift
  /// @SharedReader(.secretValues(matching: ["service": "deploy"], as: DeployKey.self)) var keys
  /// ```
  ///
  /// It behaves as `.secretItems(matching:in:refreshWindow:)`, and each search also fetches
  /// every matching secret (one `GetSecrets` call, a few hundred bytes per item and a decryption
  /// each): choose it only when the values are needed. An item that does not decode is given
  /// with ``SecretItemValue/decodingError`` set, the others with their values; a locked
  /// matching item makes the search an error (`SecretError.locked`), the last value kept.
  public static func secretValues<Value: Decodable & Sendable>(
    matching attributes: [String: String] = [:], in collection: CollectionID = .default, as type: Value.Type,
    refreshWindow: Duration = .milliseconds(50)
  ) -> Self where Self == SecretValuesKey<Value>.Default {
    Self[SecretValuesKey(attributes, collection, refreshWindow: refreshWindow), default: []]
  }
}

/// The key behind `.secretItems(matching:in:refreshWindow:)`: a live search, read only.
public struct SecretItemsKey: SharedReaderKey, CustomStringConvertible {
  let live: LiveQuery<[SecretItemInfo]>

  init(_ attributes: [String: String], _ collection: CollectionID, refreshWindow: Duration) {
    live = LiveQuery(
      .init(attributes: attributes, collection: collection, includeSecrets: false), refreshWindow: refreshWindow,
      environment: SharedEnvironment.current
    ) { found in found.map(\.item).sorted(by: SecretItemInfo.inQueryOrder) }
  }

  /// The query and the store: declarations with equal ids share one value.
  public var id: SecretQueryID { SecretQueryID(live) }

  /// `.secretItems(matching: […], in: COLLECTION)`, for messages and debugging.
  public var description: String {
    ".secretItems(matching: \(live.query.attributes), in: \(live.query.collection))"
  }

  /// Searches at once on the first load; later loads search off the cooperative pool.
  public func load(context: LoadContext<[SecretItemInfo]>, continuation: LoadContinuation<[SecretItemInfo]>) {
    live.load(context: context, continuation: continuation)
  }

  /// Watches the collection's change signals and searches again once per window.
  public func subscribe(
    context: LoadContext<[SecretItemInfo]>, subscriber: SharedSubscriber<[SecretItemInfo]>
  ) -> SharedSubscription {
    live.subscribe(subscriber: subscriber)
  }
}

/// The key behind `.secretValues(matching:in:as:refreshWindow:)`: a live search that decodes
/// each item's secret, read only.
public struct SecretValuesKey<Value: Decodable & Sendable>: SharedReaderKey, CustomStringConvertible {
  let live: LiveQuery<[SecretItemValue<Value>]>

  init(_ attributes: [String: String], _ collection: CollectionID, refreshWindow: Duration) {
    live = LiveQuery(
      .init(attributes: attributes, collection: collection, includeSecrets: true), refreshWindow: refreshWindow,
      environment: SharedEnvironment.current
    ) { found in
      if let locked = found.first(where: \.item.isLocked) {
        throw SecretError.locked(path: locked.item.collectionPath)
      }
      return found.sorted { SecretItemInfo.inQueryOrder($0.item, $1.item) }.map { found in
        let decoded = SecretJSON.decode(Value.self, found.secret ?? [], path: found.item.path)
        return SecretItemValue(item: found.item, value: try? decoded.get(), decodingError: decoded.failure)
      }
    }
  }

  /// The query and the store: declarations with equal ids share one value.
  public var id: SecretQueryID { SecretQueryID(live) }

  /// `.secretValues(matching: […], in: COLLECTION, as: TYPE)`, for messages and debugging.
  public var description: String {
    ".secretValues(matching: \(live.query.attributes), in: \(live.query.collection), as: \(Value.self))"
  }

  /// Searches at once on the first load; later loads search off the cooperative pool.
  public func load(
    context: LoadContext<[SecretItemValue<Value>]>, continuation: LoadContinuation<[SecretItemValue<Value>]>
  ) {
    live.load(context: context, continuation: continuation)
  }

  /// Watches the collection's change signals and searches again once per window.
  public func subscribe(
    context: LoadContext<[SecretItemValue<Value>]>, subscriber: SharedSubscriber<[SecretItemValue<Value>]>
  ) -> SharedSubscription {
    live.subscribe(subscriber: subscriber)
  }
}

/// What makes two live queries one: their attributes, collection, and store.
public struct SecretQueryID: Hashable, Sendable {
  /// The attributes every item of the query has.
  public let attributes: [String: String]
  /// The collection searched.
  public let collection: CollectionID
  let store: ObjectIdentifier

  init<Value>(_ live: LiveQuery<Value>) {
    attributes = live.query.attributes
    collection = live.query.collection
    store = live.owner
  }
}

extension Result {
  fileprivate var failure: Failure? {
    if case .failure(let error) = self { error } else { nil }
  }
}
