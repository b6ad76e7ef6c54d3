// What secretd says of its store (its own interface on the service object); other providers
// have none.
import GLibBridge
import SecretMemory

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
      maxSecretSize: properties["MaxSecretSize"]?.uint64.map { Int(clamping: $0) },
      sealedState: properties["SealedState"]?.string)
  }

  /// Unlocks secretd's persistent collection with `passphrase` (or sets it, the first time);
  /// whether the key was made now. The passphrase goes to secretd in clear over the bus, to
  /// the same user's daemon, as a `plain` session sends secrets.
  func unlockSealed(passphrase: SecretBytes) throws(SecretError) -> Bool {
    let reply = try passphrase.withUnsafeBytes { (bytes) throws(SecretError) in
      try callObject(
        "/org/freedesktop/secrets", Self.secretdInterface, "UnlockWithPassphrase", .tuple([.copyingBytes(bytes)]),
        replyType: "(b)")
    }
    return reply.child(0)?.boolean ?? false
  }

  /// Asks secretd to let go of the stores it refused at start.
  func discardRejectedStores() throws(SecretError) {
    _ = try callObject(
      "/org/freedesktop/secrets", Self.secretdInterface, "DiscardRejectedStores", .tuple([]), replyType: "()")
  }
}
