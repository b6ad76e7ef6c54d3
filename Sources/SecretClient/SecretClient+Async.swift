// The async forms of every call: the same work, run on the dedicated blocking threads.
extension SecretClient {
  /// The secret of the item whose attributes include `attributes`, or `nil` when there is none;
  /// the `async` form of `read(_:in:exactly:)`.
  ///
  /// The blocking libsecret call runs on a dedicated thread, never on Swift's cooperative pool.
  /// A match in a locked collection is ``SecretError/locked(path:)``, not absent.
  ///
  /// - Parameters:
  ///   - attributes: the attributes that identify the item; must not be empty.
  ///   - collection: search only this collection; `nil` searches them all.
  ///   - exactly: read only the item `attributes` name (``isNamed(_:by:)``); items with more
  ///     attributes are ignored.
  public func read(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) async throws(SecretError) -> SecretValue? {
    try await offload { client throws(SecretError) in try client.read(attributes, in: collection, exactly: exactly) }
  }

  /// Stores `value` in the item with these attributes, replacing its secret if it exists; the
  /// `async` form of `write(_:attributes:label:in:exactly:)`, run on a dedicated thread.
  ///
  /// - Parameters:
  ///   - value: the secret.
  ///   - attributes: the attributes that identify the item; must not be empty.
  ///   - label: what people see in keyring managers; defaults to the attributes.
  ///   - collection: where to create the item; the `default` alias unless given.
  ///   - exactly: replace only the item these attributes name (``isNamed(_:by:)``), which
  ///     takes them, expiry included; items with more attributes are left alone.
  public func write(
    _ value: SecretValue, attributes: [String: String], label: String? = nil, in collection: CollectionID = .default,
    exactly: Bool = false
  ) async throws(SecretError) {
    try await offload { client throws(SecretError) in
      try client.write(value, attributes: attributes, label: label, in: collection, exactly: exactly)
    }
  }

  /// Deletes every item whose attributes include `attributes` (or, with `exactly`, every item
  /// they name, ``isNamed(_:by:)``) and returns whether any was deleted; the `async` form of
  /// `delete(_:in:exactly:)`, run on a dedicated thread.
  @discardableResult
  public func delete(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) async throws(SecretError) -> Bool {
    try await offload { client throws(SecretError) in try client.delete(attributes, in: collection, exactly: exactly) }
  }

  /// Items whose attributes include `attributes` (all items when empty); secrets only with
  /// `includeSecrets`, and only for unlocked items. The `async` form of
  /// `search(_:includeSecrets:in:)`, run on a dedicated thread.
  public func search(
    _ attributes: [String: String] = [:], includeSecrets: Bool = false, in collection: CollectionID? = nil
  ) async throws(SecretError) -> [SecretItem] {
    try await offload { client throws(SecretError) in
      try client.search(attributes, includeSecrets: includeSecrets, in: collection)
    }
  }

  /// The secret stored for `service` and `account` (without an account: the one stored with
  /// no account, never one of the service's accounts), or `nil`; runs on a dedicated thread.
  public func read(service: String, account: String? = nil, in collection: CollectionID? = nil)
    async throws(SecretError) -> SecretValue?
  {
    try await offload { client throws(SecretError) in
      try client.read(service: service, account: account, in: collection)
    }
  }

  /// Stores the secret for `service` and `account`, replacing only the item they name; runs on
  /// a dedicated thread.
  public func write(
    _ value: SecretValue, service: String, account: String? = nil, label: String? = nil,
    in collection: CollectionID = .default
  ) async throws(SecretError) {
    try await offload { client throws(SecretError) in
      try client.write(value, service: service, account: account, label: label, in: collection)
    }
  }

  /// Deletes the secret stored for `service` and `account` (without an account: the one stored
  /// with no account) and returns whether there was one; runs on a dedicated thread.
  @discardableResult
  public func delete(service: String, account: String? = nil, in collection: CollectionID? = nil)
    async throws(SecretError) -> Bool
  {
    try await offload { client throws(SecretError) in
      try client.delete(service: service, account: account, in: collection)
    }
  }

  /// The object path of a collection, with an alias resolved; runs on a dedicated thread.
  /// Throws ``SecretError/noSuchObject(path:)`` for an alias that points nowhere.
  public func path(of collection: CollectionID) async throws(SecretError) -> String {
    try await offload { client throws(SecretError) in try client.path(of: collection) }
  }

  /// Every collection of the provider, with label, lock state and item count; runs on a
  /// dedicated thread.
  public func collections() async throws(SecretError) -> [CollectionInfo] {
    try await offload { client throws(SecretError) in try client.collections() }
  }

  /// Creates a collection and returns its object path; runs on a dedicated thread, so a
  /// provider's password prompt does not hold up other tasks.
  public func createCollection(label: String, alias: String? = nil) async throws(SecretError) -> String {
    try await offload { client throws(SecretError) in try client.createCollection(label: label, alias: alias) }
  }

  /// Points `alias` at the collection at `path`, or removes the alias when `path` is `nil`; runs
  /// on a dedicated thread.
  public func setAlias(_ alias: String, to path: String?) async throws(SecretError) {
    try await offload { client throws(SecretError) in try client.setAlias(alias, to: path) }
  }

  /// Locks a collection; runs on a dedicated thread.
  public func lock(_ collection: CollectionID = .default) async throws(SecretError) {
    try await offload { client throws(SecretError) in try client.lock(collection) }
  }

  /// Unlocks a collection; runs on a dedicated thread, so a provider's prompt does not hold up
  /// other tasks. A provider that must prompt and cannot gives ``SecretError/promptDismissed``.
  public func unlock(_ collection: CollectionID = .default) async throws(SecretError) {
    try await offload { client throws(SecretError) in try client.unlock(collection) }
  }

  /// Changes to the items of a collection made by anyone, this process included; the `async`
  /// form of `changes(in:)`. The subscription is active when this returns, and ends when the
  /// sequence's iteration ends or the sequence is released.
  public func changes(in collection: CollectionID = .default) async throws(SecretError) -> AsyncStream<ItemChange> {
    try await offload { client throws(SecretError) in try client.changes(in: collection) }
  }

  func offload<T: Sendable>(_ body: @escaping @Sendable (SecretClient) throws(SecretError) -> T)
    async throws(SecretError) -> T
  {
    try await BlockingExecutor.shared.run { () throws(SecretError) -> T in try body(self) }
  }
}
