// secretd's own interface (io.github.swiftsecrets.Secretd1) on the service object: what it says
// of its store, and its persistent collection's passphrase and unlockers; other providers have
// none. A passphrase, and every change of what opens the collection, goes to the unique name the
// bus says runs as this user, as secrets do: never to whoever owns the well-known name.
import GLibBridge
import SecretMemory

extension ServiceHandle {
  static let secretdInterface = "io.github.swiftsecrets.Secretd1"
  private static let sealedCollection = "/org/freedesktop/secrets/collection/login"
  /// Argon2id and a TPM may take seconds; the bus's default is 25.
  private static let sealedCallTimeout: Int32 = 120_000

  /// secretd's store, read with one `Properties.GetAll`; nil when the provider is not secretd.
  func providerStore() throws(SecretError) -> ProviderStore? {
    let properties: [String: Variant]
    do {
      properties = try allProperties(of: Self.secretdInterface, at: Self.servicePath)
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
      try callSecretd("UnlockWithPassphrase", .tuple([.copyingBytes(bytes)]), replyType: "(b)")
    }
    return reply.child(0)?.boolean ?? false
  }

  /// Asks secretd to let go of the stores it refused at start.
  func discardRejectedStores() throws(SecretError) {
    _ = try callSecretd("DiscardRejectedStores", .tuple([]), replyType: "()", about: Self.servicePath)
  }

  /// Adds an unlocker of `kind` (`passphrase` or `login`, with `passphrase`; `tpm`, with none);
  /// its number.
  func addUnlocker(kind: String, passphrase: SecretBytes?) throws(SecretError) -> UInt32 {
    let reply = try (passphrase ?? SecretBytes()).withUnsafeBytes { (bytes) throws(SecretError) in
      try callSecretd("AddUnlocker", .tuple([.string(kind), .copyingBytes(bytes)]), replyType: "(u)")
    }
    return reply.child(0)?.uint32 ?? 0
  }

  /// The persistent collection's unlockers, in the order added.
  func unlockers() throws(SecretError) -> [SealedUnlocker] {
    let reply = try callSecretd("ListUnlockers", .tuple([]), replyType: "(a(us))")
    return (reply.child(0)?.elements ?? []).map { entry in
      SealedUnlocker(number: entry.child(0)?.uint32 ?? 0, kind: entry.child(1)?.string ?? "")
    }
  }

  /// Removes unlocker `number`; secretd keeps the last one.
  func removeUnlocker(_ number: UInt32) throws(SecretError) {
    _ = try callSecretd(
      "RemoveUnlocker", .tuple([.uint32(number)]), replyType: "()",
      about: "unlocker \(number) of \(Self.sealedCollection)")
  }

  /// Calls `method` of secretd's interface on the trusted provider; errors name `about`, and a
  /// provider without the interface is said not to be secretd.
  private func callSecretd(
    _ method: String, _ arguments: DBusValue, replyType: String, about: String = sealedCollection
  ) throws(SecretError) -> Variant {
    try callObject(
      Self.servicePath, Self.secretdInterface, method, arguments, replyType: replyType,
      destination: try trustedProvider(), about: about, timeout: Self.sealedCallTimeout,
      refusal: { self.refusal($0, about: about) })
  }

  /// secretd's refusal, in its own words (it says what changed nothing and what to do), but a
  /// missing object, a bad argument and a provider that is not secretd.
  private func refusal(_ error: GLibError, about object: String) -> SecretError {
    switch error.remoteName {
    case "org.freedesktop.Secret.Error.NoSuchObject":
      .noSuchObject(path: object)
    case "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
      "org.freedesktop.DBus.Error.UnknownObject":
      .dbus(
        name: error.remoteName ?? "",
        message: "\(busName) is served by a provider other than secretd: it has no persistent collection and no "
          + "unlockers, which belong to `secretd --persistent`")
    case "org.freedesktop.Secret.Error.IsLocked", "org.freedesktop.DBus.Error.Failed":
      .dbus(name: error.remoteName ?? "", message: error.reason)
    default:
      SecretError(error, busName: busName, object: object)
    }
  }
}
