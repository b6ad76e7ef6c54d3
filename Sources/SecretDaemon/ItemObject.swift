// org.freedesktop.Secret.Item at /org/freedesktop/secrets/collection/NAME/N
// (and /org/freedesktop/secrets/aliases/ALIAS/N).
import GLibBridge
import TransferCrypto

struct ItemObject: BusObject {
  let daemon: Daemon
  let reference: ItemReference

  init(daemon: Daemon, node: ObjectNode) throws(DBusError) {
    guard case .item(let collection, let number) = node, let name = try? daemon.resolve(collection),
      (try? daemon.store.item(ItemReference(collection: name, item: number))) != nil
    else { throw .noObject(ObjectPaths.canonical(node)) }
    self.daemon = daemon
    self.reference = ItemReference(collection: name, item: number)
  }

  var path: String { ObjectPaths.item(reference) }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<ItemObject>(
    Interfaces.item,
    methods: [
      Method("Delete", out: [Argument("Prompt", "o")], access: .write) { item, _ in try item.delete() },
      Method(
        "GetSecret", in: Input("session", .objectPath), out: [Argument("secret", "(oayays)")], access: .read,
        cost: .boundedWhen { daemon, path, _ in daemon.isSmallSecret(at: path) }
      ) { item, context, session in try item.getSecret(session: session, caller: context.sender) },
      Method("SetSecret", in: Input("secret", .secret), access: .write) { item, context, secret in
        try item.setSecret(secret, context: context)
      },
    ],
    properties: [
      Property("Locked", "b") { item in
        _ = try item.stored()
        return .boolean(item.daemon.store.collections[item.reference.collection]?.locked ?? false)
      },
      Property(
        "Attributes", .stringDictionary, get: { item in .stringDictionary(try item.stored().attributes) },
        set: { item, attributes in
          try item.change { store, reference throws(StoreError) in try store.setAttributes(reference, attributes) }
        }),
      Property(
        "Label", .string, get: { item in .string(try item.stored().label) },
        set: { item, label in
          try item.change { store, reference throws(StoreError) in try store.setLabel(reference, label) }
        }),
      Property(
        "Type", .string, get: { item in .string(try item.stored().type) },
        set: { item, type in
          try item.change { store, reference throws(StoreError) in try store.setType(reference, type) }
        }),
      Property("Created", "t") { item in .uint64(try item.stored().created) },
      Property("Modified", "t") { item in .uint64(try item.stored().modified) },
    ])

  private func change(_ apply: (Store, ItemReference) throws(StoreError) -> Void) throws(DBusError) {
    do throws(StoreError) { try apply(daemon.store, reference) } catch { throw refusal(error) }
  }

  /// A store refusal as this object answers it. An item that is gone by the time the call reads
  /// it (its expiry came while the call was routed) is answered as a call that came a moment
  /// later is: no object at this path, which clients read as "no such item".
  private func refusal(_ error: StoreError) -> DBusError {
    if case .noSuchItem = error { return .noObject(path) }
    return DBusError(error)
  }

  private func stored() throws(DBusError) -> StoredItem {
    do throws(StoreError) { return try daemon.store.item(reference) } catch { throw refusal(error) }
  }

  /// Delete() -> (o prompt)
  private func delete() throws -> DBusValue {
    do throws(StoreError) { try daemon.store.deleteItem(reference) } catch { throw refusal(error) }
    return .tuple([.objectPath(ObjectPaths.none)])
  }

  /// GetSecret(o session) -> ((oayays) secret)
  private func getSecret(session sessionPath: String, caller: String) throws -> DBusValue {
    let session = try daemon.session(at: sessionPath, caller: caller)
    let item: StoredItem
    do throws(StoreError) { item = try daemon.store.unlockedItem(reference) } catch { throw refusal(error) }
    return .tuple([
      try SecretWireFormat.make(
        daemon.store.secret(of: item), contentType: item.contentType, for: session, at: sessionPath)
    ])
  }

  /// SetSecret((oayays) secret)
  private func setSecret(_ secret: Variant, context: CallContext) throws -> DBusValue {
    // Read first, so that a plain secret sent to an item that is gone is still scrubbed.
    let (secret, contentType) = try SecretWireFormat.read(secret, daemon: daemon, context: context)
    _ = try stored()
    do throws(StoreError) { try daemon.store.setSecret(reference, secret, contentType: contentType) } catch {
      throw refusal(error)
    }
    return .tuple([])
  }
}
