extension SecretClient {
  /// The object path of a collection; an alias is resolved. Throws ``SecretError/noSuchObject(path:)``
  /// for an alias that points nowhere.
  public func path(of collection: CollectionID) throws(SecretError) -> String {
    try withService { service throws(SecretError) in try Self.path(of: collection, on: service) }
  }

  static func path(of collection: CollectionID, on service: ServiceHandle) throws(SecretError) -> String {
    switch collection {
    case .path(let path): return path
    case .alias(let alias):
      guard let path = try service.readAlias(alias) else { throw .noSuchObject(path: "alias \(alias)") }
      return path
    }
  }

  /// Every collection of the provider, with label, lock state and item count.
  public func collections() throws(SecretError) -> [CollectionInfo] {
    try withService { service throws(SecretError) in try service.collections() }
  }

  /// Creates a collection (providers such as gnome-keyring ask for a password by prompt) and
  /// returns its object path.
  public func createCollection(label: String, alias: String? = nil) throws(SecretError) -> String {
    try Self.validate(text: label, what: "label")
    return try withService { service throws(SecretError) in try service.createCollection(label: label, alias: alias) }
  }

  /// Points `alias` at the collection at `path`, or removes the alias when `path` is `nil`.
  public func setAlias(_ alias: String, to path: String?) throws(SecretError) {
    try withService { service throws(SecretError) in try service.setAlias(alias, to: path) }
  }

  /// Locks a collection.
  public func lock(_ collection: CollectionID = .default) throws(SecretError) {
    try withService { service throws(SecretError) in
      _ = try service.setLocked(true, paths: [try Self.path(of: collection, on: service)])
    }
  }

  /// Unlocks a collection. A provider that must prompt and cannot gives ``SecretError/promptDismissed``.
  public func unlock(_ collection: CollectionID = .default) throws(SecretError) {
    try withService { service throws(SecretError) in
      let path = try Self.path(of: collection, on: service)
      guard try service.setLocked(false, paths: [path]) > 0 else {
        // Nothing changed: either it was already unlocked, or the prompt was dismissed.
        if try !service.isLocked(collection: path) { return }
        throw .promptDismissed
      }
    }
  }
}

extension SecretClient {
  /// Changes to the items of a collection made by anyone, this process included, as they are
  /// signalled by the provider.
  ///
  /// The subscription is active when this returns, so a change made afterwards is never missed.
  /// It ends when the sequence's iteration ends or the sequence is released.
  ///
  /// ```swift
  /// for await change in try client.changes(in: .default) {
  ///   print(change.kind, change.itemPath)
  /// }
  /// ```
  public func changes(in collection: CollectionID = .default) throws(SecretError) -> AsyncStream<ItemChange> {
    try withService { service throws(SecretError) in
      let path = try Self.path(of: collection, on: service)
      let (stream, continuation) = AsyncStream<ItemChange>.makeStream()
      let subscription = service.subscribeToItemChanges(collectionPath: path) { continuation.yield($0) }
      continuation.onTermination = { _ in withExtendedLifetime(subscription) {} }
      return stream
    }
  }
}

extension SecretClient {
  /// Changes to a collection itself (its label or lock state), as the provider signals them
  /// (`CollectionChanged`); active when this returns, ending with the iteration.
  package func collectionChanges(in collection: CollectionID = .default) throws(SecretError) -> AsyncStream<Void> {
    try withService { service throws(SecretError) in
      let path = try Self.path(of: collection, on: service)
      let (stream, continuation) = AsyncStream<Void>.makeStream()
      let subscription = service.subscribeToCollectionChanges(collectionPath: path) { continuation.yield() }
      continuation.onTermination = { _ in withExtendedLifetime(subscription) {} }
      return stream
    }
  }
}

extension SecretClient {
  /// Which connection and process own the provider's bus name.
  public func provider() throws(SecretError) -> ProviderInfo {
    try withService { service throws(SecretError) in try service.providerInfo() }
  }

  /// Where secretd keeps its store; nil when the provider is not secretd.
  public func providerStore() throws(SecretError) -> ProviderStore? {
    try withService { service throws(SecretError) in try service.providerStore() }
  }

  /// Unlocks secretd's persistent collection (`secretd --persistent`) with its passphrase, or
  /// sets the passphrase when it has none yet; returns whether it was set now. A wrong
  /// passphrase throws and changes nothing.
  public func unlockSealed(passphrase: SecretBytes) throws(SecretError) -> Bool {
    try withService { service throws(SecretError) in try service.unlockSealed(passphrase: passphrase) }
  }

  /// Lets go of the stores secretd refused at start (they are kept until then).
  public func discardRejectedStores() throws(SecretError) {
    try withService { service throws(SecretError) in try service.discardRejectedStores() }
  }

  /// Adds `passphrase` as another way to open secretd's persistent collection, which must be
  /// unlocked; its unlocker's number. No item is encrypted again.
  public func addUnlocker(passphrase: SecretBytes) throws(SecretError) -> UInt32 {
    try withService { service throws(SecretError) in try service.addUnlocker(kind: "passphrase", passphrase: passphrase)
    }
  }

  /// Adds the user's login password as a way to open secretd's persistent collection, which must
  /// be unlocked: PAM then unlocks it at login (`secretctl pam-unlock`); its unlocker's number.
  public func addLoginUnlocker(password: SecretBytes) throws(SecretError) -> UInt32 {
    try withService { service throws(SecretError) in try service.addUnlocker(kind: "login", passphrase: password) }
  }

  /// Seals the persistent collection's key to this machine's TPM 2.0 (the one secretd's
  /// `--tcti` names), so that secretd opens it at start with nobody typing; its unlocker's number.
  public func addTPMUnlocker() throws(SecretError) -> UInt32 {
    try withService { service throws(SecretError) in try service.addUnlocker(kind: "tpm", passphrase: nil) }
  }

  /// The ways into secretd's persistent collection, in the order added (readable while it is
  /// locked).
  public func unlockers() throws(SecretError) -> [SealedUnlocker] {
    try withService { service throws(SecretError) in try service.unlockers() }
  }

  /// Removes unlocker `number`; secretd refuses the last one, and any change while the
  /// collection is locked.
  public func removeUnlocker(_ number: UInt32) throws(SecretError) {
    try withService { service throws(SecretError) in try service.removeUnlocker(number) }
  }

  /// Which connection and process own the provider's bus name; runs on a dedicated thread.
  public func provider() async throws(SecretError) -> ProviderInfo {
    try await offload { client throws(SecretError) in try client.provider() }
  }
}
