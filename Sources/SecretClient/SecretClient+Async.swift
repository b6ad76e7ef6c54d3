// The async forms of every call: the same work, run on the dedicated blocking threads.
extension SecretClient {
  public func read(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) async throws(SecretError) -> SecretValue? {
    try await offload { client throws(SecretError) in try client.read(attributes, in: collection, exactly: exactly) }
  }

  public func write(
    _ value: SecretValue, attributes: [String: String], label: String? = nil, in collection: CollectionID = .default,
    exactly: Bool = false
  ) async throws(SecretError) {
    try await offload { client throws(SecretError) in
      try client.write(value, attributes: attributes, label: label, in: collection, exactly: exactly)
    }
  }

  @discardableResult
  public func delete(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) async throws(SecretError) -> Bool {
    try await offload { client throws(SecretError) in try client.delete(attributes, in: collection, exactly: exactly) }
  }

  public func search(
    _ attributes: [String: String] = [:], includeSecrets: Bool = false, in collection: CollectionID? = nil
  ) async throws(SecretError) -> [SecretItem] {
    try await offload { client throws(SecretError) in try client.search(attributes, includeSecrets: includeSecrets, in: collection) }
  }

  public func read(service: String, account: String? = nil, in collection: CollectionID? = nil) async throws(SecretError) -> SecretValue? {
    try await read(Self.attributes(service: service, account: account), in: collection)
  }

  public func write(
    _ value: SecretValue, service: String, account: String? = nil, label: String? = nil,
    in collection: CollectionID = .default
  ) async throws(SecretError) {
    try await write(value, attributes: Self.attributes(service: service, account: account), label: label, in: collection)
  }

  @discardableResult
  public func delete(service: String, account: String? = nil, in collection: CollectionID? = nil) async throws(SecretError) -> Bool {
    try await delete(Self.attributes(service: service, account: account), in: collection)
  }

  public func path(of collection: CollectionID) async throws(SecretError) -> String {
    try await offload { client throws(SecretError) in try client.path(of: collection) }
  }

  public func collections() async throws(SecretError) -> [CollectionInfo] {
    try await offload { client throws(SecretError) in try client.collections() }
  }

  public func createCollection(label: String, alias: String? = nil) async throws(SecretError) -> String {
    try await offload { client throws(SecretError) in try client.createCollection(label: label, alias: alias) }
  }

  public func setAlias(_ alias: String, to path: String?) async throws(SecretError) {
    try await offload { client throws(SecretError) in try client.setAlias(alias, to: path) }
  }

  public func lock(_ collection: CollectionID = .default) async throws(SecretError) {
    try await offload { client throws(SecretError) in try client.lock(collection) }
  }

  public func unlock(_ collection: CollectionID = .default) async throws(SecretError) {
    try await offload { client throws(SecretError) in try client.unlock(collection) }
  }

  public func changes(in collection: CollectionID = .default) async throws(SecretError) -> AsyncStream<ItemChange> {
    try await offload { client throws(SecretError) in try client.changes(in: collection) }
  }

  private func offload<T: Sendable>(_ body: @escaping @Sendable (SecretClient) throws(SecretError) -> T) async throws(SecretError) -> T {
    try await executor.run { () throws(SecretError) -> T in try body(self) }
  }
}
