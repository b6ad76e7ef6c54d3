public import SharedState

/// What live queries (`.secretItems(matching:in:refreshWindow:)`, `.secretValues`) need of a
/// ``SecretKeyStore``: a search of one collection's items and a watch on that collection. Keys
/// never use it; they read and watch their own item.
///
/// Each operation blocks; queries call them off Swift's cooperative pool, except for the first
/// search, which runs where the query is declared.
public struct SecretSearch: Sendable {
  /// The items of a collection whose attributes include the given ones (all when empty), with
  /// their secrets when the `Bool` is set (locked items without).
  public var search:
    @Sendable (_ attributes: [String: String], CollectionID, _ includeSecrets: Bool) throws -> [FoundItem]
  /// Calls `onChange` whenever an item of the collection, or the collection itself (its lock),
  /// may have changed, until the subscription is cancelled. Throwing
  /// `SecretError.serviceUnavailable` means "not now": the query tries again after its next
  /// successful search; any other error stops watching for good.
  public var watch: @Sendable (CollectionID, _ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription
  /// Whether the items live in this process's memory: a change then updates the queries before
  /// the write that made it returns.
  var isInMemory = false

  /// A search from its two operations.
  ///
  /// - Parameters:
  ///   - search: Returns the collection's items whose attributes include the given ones, with
  ///     their secrets when asked for.
  ///   - watch: Calls its handler whenever the collection's items may have changed.
  public init(
    search: @escaping @Sendable ([String: String], CollectionID, Bool) throws -> [FoundItem],
    watch: @escaping @Sendable (CollectionID, @escaping @Sendable () -> Void) throws -> SharedSubscription
  ) {
    self.search = search
    self.watch = watch
  }

  /// One item a search found.
  public struct FoundItem: Hashable, Sendable {
    /// The item's description.
    public var item: SecretItemInfo
    /// Its secret, when the search asked for secrets and the item is unlocked.
    public var secret: [UInt8]?

    /// A found item from its parts.
    public init(item: SecretItemInfo, secret: [UInt8]?) {
      self.item = item
      self.secret = secret
    }
  }
}
