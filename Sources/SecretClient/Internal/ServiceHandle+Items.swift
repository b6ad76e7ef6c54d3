import CLibSecret
import FoundationEssentials
import GLibBridge

/// The object paths a search found: items that can be read now, and items in locked collections.
typealias ItemPaths = (unlocked: [String], locked: [String])

extension ServiceHandle {
  /// The object paths of the items whose attributes include `attributes`, unlocked and locked.
  /// Wraps `org.freedesktop.Secret.Service.SearchItems`.
  func searchPaths(_ attributes: [String: String]) throws(SecretError) -> ItemPaths {
    try Self.itemPaths(in: callAll([searchCall(attributes, to: knownProvider)])[0].get())
  }

  /// `searchPaths`, from the provider this connection's transfer session belongs to; with no
  /// session yet (a read will need one), the session is opened in the same round trip.
  func searchPathsOpeningSession(_ attributes: [String: String]) throws(SecretError) -> ItemPaths {
    try Self.itemPaths(in: callProvider([searchCall(attributes, to: busName)])[0].get())
  }

  /// `SearchItems`, to send alone or in a batch.
  func searchCall(_ attributes: [String: String], to destination: String) -> BusCall {
    BusCall(
      to: destination, Self.servicePath, Self.serviceInterface, "SearchItems",
      .tuple([.stringDictionary(attributes)]), replyType: "(aoao)")
  }

  /// The paths a `SearchItems` answered.
  static func itemPaths(in reply: Variant) -> ItemPaths {
    (reply.child(0)?.objectPaths ?? [], reply.child(1)?.objectPaths ?? [])
  }

  /// Where calls about items go: the provider this connection's transfer session belongs to,
  /// once there is one; before that, whoever owns the provider's name.
  var knownProvider: String { transfer.withLock { $0?.provider } ?? busName }

  /// Deletes one item. Wraps `secret_service_delete_item_dbus_path_sync`.
  func deleteItem(at path: String) throws(SecretError) {
    let service = try libsecretService()
    _ = try call(object: path) { error in
      secret_service_delete_item_dbus_path_sync(service, path, nil, &error) != 0 ? true : nil
    }
  }

  /// Items with their labels and attributes, in the collection at `collectionPath` when
  /// given, and the secrets of the unlocked ones when `loadSecrets` is set. Two round trips: the
  /// search (opening the transfer session alongside when secrets are wanted and there is none
  /// yet), then every item's `Properties.GetAll` and one `GetSecrets`, together. Items deleted
  /// meanwhile are left out.
  func searchItems(_ attributes: [String: String], inCollectionAt collectionPath: String?, loadSecrets: Bool)
    throws(SecretError) -> [SecretItem]
  {
    var (unlocked, locked) = loadSecrets ? try searchPathsOpeningSession(attributes) : try searchPaths(attributes)
    if let collectionPath {
      let prefix = collectionPath + "/"
      (unlocked, locked) = (unlocked.filter { $0.hasPrefix(prefix) }, locked.filter { $0.hasPrefix(prefix) })
    }
    guard loadSecrets, !unlocked.isEmpty else { return try describe(unlocked, locked, alongside: nil).items }
    return try inTransferSession { session throws(SecretError) in
      let (items, answer) = try describe(unlocked, locked, alongside: getSecretsCall(unlocked, in: session))
      guard let answer else { return items }
      let found = try secrets(in: answer.get(), of: session)
      return items.map { item in
        var item = item
        item.secret = found[item.path]
        return item
      }
    }
  }

  /// The items at the `unlocked` and `locked` paths, read with one `Properties.GetAll` each,
  /// all in one round trip with `extra`, whose answer is returned.
  private func describe(_ unlocked: [String], _ locked: [String], alongside extra: BusCall?) throws(SecretError)
    -> (items: [SecretItem], extra: Result<Variant, SecretError>?)
  {
    let paths = unlocked + locked
    let provider = extra?.destination ?? knownProvider
    let mark = mirror.mark()
    var answers = callAll(paths.map { propertiesCall($0, to: provider) } + (extra.map { [$0] } ?? []))
    let extraAnswer = extra == nil ? nil : answers.removeLast()
    var items: [SecretItem] = []
    for (index, (path, answer)) in zip(paths, answers).enumerated() {
      guard let properties = try Self.unlessGone(answer)?.child(0)?.variantDictionary else { continue }
      items.append(Self.item(at: path, properties, lockedByDefault: index >= unlocked.count))
    }
    mirror.learn(Dictionary(items.map { ($0.path, $0.attributes) }) { first, _ in first }, since: mark)
    return (items, extraAnswer)
  }

  /// `Properties.GetAll` of an item, to send alone or in a batch.
  private func propertiesCall(_ path: String, to destination: String) -> BusCall {
    BusCall(
      to: destination, path, "org.freedesktop.DBus.Properties", "GetAll", .tuple([.string(Self.itemInterface)]),
      replyType: "(a{sv})")
  }

  /// `Properties.Get` of an item's attributes, to send alone or in a batch.
  func attributesCall(_ path: String, to destination: String) -> BusCall {
    BusCall(
      to: destination, path, "org.freedesktop.DBus.Properties", "Get",
      .tuple([.string(Self.itemInterface), .string("Attributes")]), replyType: "(v)")
  }

  /// The answer, or nil when the object it was asked of no longer exists.
  static func unlessGone(_ answer: Result<Variant, SecretError>) throws(SecretError) -> Variant? {
    do {
      return try answer.get()
    } catch .noSuchObject {
      return nil
    }
  }

  private static func item(at path: String, _ properties: [String: Variant], lockedByDefault: Bool) -> SecretItem {
    SecretItem(
      path: path, label: properties["Label"]?.string ?? "",
      attributes: properties["Attributes"]?.stringDictionary ?? [:],
      isLocked: properties["Locked"]?.boolean ?? lockedByDefault,
      created: Date(timeIntervalSince1970: TimeInterval(properties["Created"]?.uint64 ?? 0)),
      modified: Date(timeIntervalSince1970: TimeInterval(properties["Modified"]?.uint64 ?? 0)), secret: nil)
  }
}
