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
      Method("Delete", out: [Argument("Prompt", "o")], access: .write) { item, _, _ throws(DBusError) in
        try item.delete()
      },
      Method(
        "GetSecret", in: [Argument("session", "o")], out: [Argument("secret", "(oayays)")], access: .read,
        cost: .boundedWhen { daemon, path, _ in daemon.isSmallSecret(at: path) }
      ) { item, arguments, context throws(DBusError) in try item.getSecret(arguments, caller: context.sender) },
      Method("SetSecret", in: [Argument("secret", "(oayays)")], access: .write) {
        item, arguments, context throws(DBusError) in try item.setSecret(arguments, context: context)
      },
    ],
    properties: [
      Property("Locked", "b") { item throws(DBusError) in
        _ = try item.stored()
        return .boolean(item.daemon.store.collections[item.reference.collection]?.locked ?? false)
      },
      Property(
        "Attributes", "a{ss}", get: { item throws(DBusError) in .stringDictionary(try item.stored().attributes) },
        set: { item, value throws(DBusError) in
          guard let attributes = value.stringDictionary else { throw .invalidArgs("Attributes is a{ss}") }
          try item.change { store, reference throws(StoreError) in try store.setAttributes(reference, attributes) }
        }),
      Property(
        "Label", "s", get: { item throws(DBusError) in .string(try item.stored().label) },
        set: { item, value throws(DBusError) in
          guard value.isOfType("s"), let label = value.string else { throw .invalidArgs("Label is a string") }
          try item.change { store, reference throws(StoreError) in try store.setLabel(reference, label) }
        }),
      Property(
        "Type", "s", get: { item throws(DBusError) in .string(try item.stored().type) },
        set: { item, value throws(DBusError) in
          guard value.isOfType("s"), let type = value.string else { throw .invalidArgs("Type is a string") }
          try item.change { store, reference throws(StoreError) in try store.setType(reference, type) }
        }),
      Property("Created", "t") { item throws(DBusError) in .uint64(try item.stored().created) },
      Property("Modified", "t") { item throws(DBusError) in .uint64(try item.stored().modified) },
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
  private func delete() throws(DBusError) -> DBusValue {
    do throws(StoreError) { try daemon.store.deleteItem(reference) } catch { throw refusal(error) }
    return .tuple([.objectPath(ObjectPaths.none)])
  }

  /// GetSecret(o session) -> ((oayays) secret)
  private func getSecret(_ arguments: Variant, caller: String) throws(DBusError) -> DBusValue {
    guard let sessionPath = arguments.child(0)?.string else { throw .invalidArgs("GetSecret takes (o)") }
    let session: TransferSession
    do throws(SessionError) { session = try daemon.sessions.session(at: sessionPath, caller: caller) } catch {
      throw DBusError(error)
    }
    let item: StoredItem
    do throws(StoreError) { item = try daemon.store.unlockedItem(reference) } catch { throw refusal(error) }
    do throws(CryptoError) {
      return .tuple([
        SecretWireFormat.make(
          try session.encode(daemon.store.secret(of: item), contentType: item.contentType, path: sessionPath))
      ])
    } catch {
      throw DBusError(error)
    }
  }

  /// SetSecret((oayays) secret)
  private func setSecret(_ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    _ = try stored()
    let (secret, contentType) = try SecretWireFormat.read(arguments.child(0), daemon: daemon, context: context)
    do throws(StoreError) { try daemon.store.setSecret(reference, secret, contentType: contentType) } catch {
      throw refusal(error)
    }
    return .tuple([])
  }
}
