// What secretd says of its store (its own interface on the service object); other providers
// have none.
import GLibBridge

extension ServiceHandle {
  static let secretdInterface = "io.github.swiftsecrets.Secretd1"

  /// secretd's store, read with one `Properties.GetAll`; nil when the provider is not secretd.
  func providerStore() throws(SecretError) -> ProviderStore? {
    let properties: [String: Variant]
    do {
      properties = try allProperties(of: Self.secretdInterface, at: "/org/freedesktop/secrets")
    } catch .dbus, .invalidArgument {
      return nil
    }
    guard let memory = properties["StoreMemory"]?.string, let budget = properties["MemoryBudget"]?.uint64,
      let used = properties["MemoryUsed"]?.uint64
    else { return nil }
    return ProviderStore(
      memory: memory, budget: Int(clamping: budget), used: Int(clamping: used),
      isKept: properties["StoreKept"]?.boolean ?? false, rejected: properties["RejectedStores"]?.strings ?? [],
      maxSecretSize: properties["MaxSecretSize"]?.uint64.map { Int(clamping: $0) })
  }

  /// Asks secretd to let go of the stores it refused at start.
  func discardRejectedStores() throws(SecretError) {
    _ = try callObject(
      "/org/freedesktop/secrets", Self.secretdInterface, "DiscardRejectedStores", .tuple([]), replyType: "()")
  }
}
