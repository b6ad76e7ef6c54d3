// What secretd says of its store (its own interface on the service object); other providers
// have none.
import CLibSecret

extension ServiceHandle {
  static let secretdInterface = "io.github.swiftsecrets.Secretd1"

  /// secretd's store, read with one `Properties.GetAll`; nil when the provider is not secretd.
  func providerStore() throws(SecretError) -> ProviderStore? {
    let properties: OpaquePointer
    do {
      properties = try allProperties(of: Self.secretdInterface, at: "/org/freedesktop/secrets")
    } catch .dbus, .invalidArgument {
      return nil
    }
    defer { g_variant_unref(properties) }
    func number(_ key: String) -> Int? { Self.value(in: properties, key, type: "t") { Int(g_variant_get_uint64($0)) } }
    guard
      let memory = Self.value(
        in: properties, "StoreMemory", type: "s", { String(cString: g_variant_get_string($0, nil)) }),
      let budget = number("MemoryBudget"), let used = number("MemoryUsed")
    else { return nil }
    let rejected = Self.value(in: properties, "RejectedStores", type: "as") { array in
      (0..<g_variant_n_children(array)).map { index in
        let child = g_variant_get_child_value(array, index)
        defer { g_variant_unref(child) }
        return String(cString: g_variant_get_string(child, nil))
      }
    }
    return ProviderStore(
      memory: memory, budget: budget, used: used,
      isKept: Self.value(in: properties, "StoreKept", type: "b") { g_variant_get_boolean($0) != 0 } ?? false,
      rejected: rejected ?? [])
  }

  /// Asks secretd to let go of the stores it refused at start.
  func discardRejectedStores() throws(SecretError) {
    let reply = try callObject(
      "/org/freedesktop/secrets", Self.secretdInterface, "DiscardRejectedStores", g_variant_new_tuple(nil, 0),
      replyType: "()")
    g_variant_unref(reply)
  }
}
