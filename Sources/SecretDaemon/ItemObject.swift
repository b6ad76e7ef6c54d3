// org.freedesktop.Secret.Item at /org/freedesktop/secrets/collection/NAME/N
// (and /org/freedesktop/secrets/aliases/ALIAS/N).
import TransferCrypto

struct ItemObject {
  let daemon: Daemon
  let reference: ItemReference

  var path: String { ObjectPaths.item(reference) }

  // MARK: Members on the bus

  func call(_ method: String, _ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    switch method {
    case "Delete": return try delete()
    case "GetSecret": return try getSecret(arguments, caller: context.sender)
    case "SetSecret": return try setSecret(arguments, context: context)
    default: throw .unknownMethod(Interfaces.item, method, path)
    }
  }

  /// The values of `names`, read from one lookup of the item.
  func properties(_ names: [String]) throws(DBusError) -> [DBusValue] {
    let item = try stored()
    return try names.map { (name) throws(DBusError) -> DBusValue in
      switch name {
      case "Locked": return .boolean(daemon.store.collections[reference.collection]?.locked ?? false)
      case "Attributes": return .stringDictionary(item.attributes)
      case "Label": return .string(item.label)
      case "Type": return .string(item.type)
      case "Created": return .uint64(item.created)
      case "Modified": return .uint64(item.modified)
      default: throw .unknownProperty(Interfaces.item, name, path)
      }
    }
  }

  func setProperty(_ name: String, _ value: Variant) throws(DBusError) {
    let change: (Store) throws(StoreError) -> Void
    switch name {
    case "Label":
      guard value.isOfType("s"), let label = value.string else { throw .invalidArgs("Label is a string") }
      change = { store throws(StoreError) in try store.setLabel(reference, label) }
    case "Type":
      guard value.isOfType("s"), let type = value.string else { throw .invalidArgs("Type is a string") }
      change = { store throws(StoreError) in try store.setType(reference, type) }
    case "Attributes":
      guard let attributes = value.stringDictionary else { throw .invalidArgs("Attributes is a{ss}") }
      change = { store throws(StoreError) in try store.setAttributes(reference, attributes) }
    default:
      throw .invalidArgs("property \(name) of \(path) is read-only")
    }
    do throws(StoreError) { try change(daemon.store) } catch { throw DBusError(error) }
  }

  private func stored() throws(DBusError) -> StoredItem {
    do throws(StoreError) { return try daemon.store.item(reference) } catch { throw DBusError(error) }
  }

  /// Delete() -> (o prompt)
  private func delete() throws(DBusError) -> DBusValue {
    do throws(StoreError) { try daemon.store.deleteItem(reference) } catch { throw DBusError(error) }
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
    do throws(StoreError) { item = try daemon.store.unlockedItem(reference) } catch { throw DBusError(error) }
    do throws(CryptoError) {
      return .tuple([
        SecretValue.make(try session.encode(item.secret, contentType: item.contentType, path: sessionPath))
      ])
    } catch {
      throw DBusError(error)
    }
  }

  /// SetSecret((oayays) secret)
  private func setSecret(_ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    _ = try stored()
    let (secret, contentType) = try SecretValue.read(arguments.child(0), daemon: daemon, context: context)
    do throws(StoreError) { try daemon.store.setSecret(reference, secret, contentType: contentType) } catch {
      throw DBusError(error)
    }
    return .tuple([])
  }
}
