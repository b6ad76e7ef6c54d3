// org.freedesktop.Secret.Service at /org/freedesktop/secrets.
import GLibBridge
import TransferCrypto

struct ServiceObject: BusObject {
  let daemon: Daemon

  init(daemon: Daemon, node: ObjectNode) { self.daemon = daemon }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<ServiceObject>(
    Interfaces.service,
    methods: [
      Method(
        "OpenSession", in: Input("algorithm", .string), Input("input", .variant),
        out: [Argument("output", "v"), Argument("result", "o")], access: .none
      ) { service, context, algorithm, input in
        try service.openSession(algorithm: algorithm, input: input, owner: context.sender)
      },
      Method(
        "CreateCollection", in: Input("properties", .variantDictionary), Input("alias", .string),
        out: [Argument("collection", "o"), Argument("prompt", "o")], access: .write
      ) { service, _, properties, alias in try service.createCollection(properties, alias: alias) },
      Method(
        "SearchItems", in: Input("attributes", .stringDictionary),
        out: [Argument("unlocked", "ao"), Argument("locked", "ao")], access: .read,
        cost: .boundedWhen { daemon, _, arguments in daemon.isSmallSearch(arguments.child(0)) }
      ) { service, _, attributes in try service.searchItems(attributes) },
      Method(
        "Unlock", in: Input("objects", .objectPaths), out: [Argument("unlocked", "ao"), Argument("prompt", "o")],
        access: .write
      ) { service, context, objects in try service.setLocked(objects, locked: false, caller: context.sender) },
      Method(
        "Lock", in: Input("objects", .objectPaths), out: [Argument("locked", "ao"), Argument("Prompt", "o")],
        access: .write
      ) { service, context, objects in try service.setLocked(objects, locked: true, caller: context.sender) },
      Method(
        "GetSecrets", in: Input("items", .objectPaths), Input("session", .objectPath),
        out: [Argument("secrets", "a{o(oayays)}")], access: .read,
        cost: .boundedWhen { daemon, _, arguments in daemon.areSmallSecrets(arguments.child(0)) }
      ) { service, context, items, session in try service.getSecrets(items, session: session, caller: context.sender) },
      Method("ReadAlias", in: Input("name", .string), out: [Argument("collection", "o")], access: .read) {
        service, _, name in service.readAlias(name)
      },
      Method("SetAlias", in: Input("name", .string), Input("collection", .objectPath), access: .write) {
        service, _, name, collection in try service.setAlias(name, to: collection)
      },
    ],
    properties: [
      Property("Collections", "ao") { service in
        .objectPaths(service.daemon.store.collectionNames.map(ObjectPaths.collection))
      }
    ])

  /// OpenSession(s algorithm, v input) -> (v output, o result)
  private func openSession(algorithm: String, input: Variant, owner: String) throws -> DBusValue {
    // The client's key is read in place; an input that is no `ay` (plain's empty string) is none.
    let sessions = daemon.sessions
    let opened =
      input.withBytes { key in
        Result { () throws(SessionError) in try sessions.open(algorithm: algorithm, clientKey: key, owner: owner) }
      } ?? Result { () throws(SessionError) in try sessions.open(algorithm: algorithm, clientKey: nil, owner: owner) }
    let (session, serverKey) = try opened.get()
    let output: DBusValue = serverKey.map { .bytes($0) } ?? .string("")
    return .tuple([.variant(output), .objectPath(ObjectPaths.session(session.number))])
  }

  /// CreateCollection(a{sv} properties, s alias) -> (o collection, o prompt); never prompts.
  private func createCollection(_ properties: [String: Variant], alias: String) throws -> DBusValue {
    var label = ""
    if let value = properties["org.freedesktop.Secret.Collection.Label"] {
      guard let text = value.string, value.isOfType("s") else {
        throw DBusError.invalidArgs("org.freedesktop.Secret.Collection.Label must be a string")
      }
      label = text
    }
    let name = try daemon.store.createCollection(label: label, alias: alias)
    Log.info("collection \(ObjectPaths.collection(name)) created")
    return .tuple([.objectPath(ObjectPaths.collection(name)), .objectPath(ObjectPaths.none)])
  }

  /// SearchItems(a{ss} attributes) -> (ao unlocked, ao locked)
  private func searchItems(_ attributes: [String: String]) throws -> DBusValue {
    try daemon.store.checkQuery(attributes)
    let found = daemon.store.search(attributes)
    return .tuple([
      .objectPaths(found.unlocked.map(ObjectPaths.item)), .objectPaths(found.locked.map(ObjectPaths.item)),
    ])
  }

  /// Unlock(ao) -> (ao unlocked, o prompt) and Lock(ao) -> (ao locked, o prompt).
  /// Memory-only collections have no password: only the sealed collection's unlock prompts,
  /// and its prompt completes when the user unlocks it (``UnlockPrompts``).
  private func setLocked(_ objects: PathList, locked: Bool, caller: String) throws -> DBusValue {
    let paths = try daemon.boundedPaths(objects)
    var done: [String] = []
    var waiting: [String] = []
    var refusal: StoreError?
    for path in paths {
      guard let collection = existingCollection(of: path) else { continue }
      do throws(StoreError) {
        try daemon.store.setLocked(collection, locked)
        done.append(path)
      } catch {
        guard case .needsPassphrase = error else { throw error }
        (waiting, refusal) = (waiting + [path], error)
      }
    }
    guard let refusal else { return .tuple([.objectPaths(done), .objectPath(ObjectPaths.none)]) }
    guard let number = daemon.unlockPrompts.open(objects: waiting, owner: caller) else { throw refusal }
    return .tuple([.objectPaths(done), .objectPath(ObjectPaths.prompt(number))])
  }

  /// The collection that `path` (a collection, or an item in one) names, when it exists.
  private func existingCollection(of path: String) -> String? {
    switch ObjectNode(path: path) {
    case .collection(let name)?:
      return try? daemon.resolve(name)
    case .item?:
      guard let reference = try? daemon.resolveItem(path: path), (try? daemon.store.item(reference)) != nil else {
        return nil
      }
      return reference.collection
    default:
      return nil
    }
  }

  /// GetSecrets(ao items, o session) -> (a{o(oayays)} secrets); locked or missing items are left
  /// out, a path named twice is answered once, and an answer that would pass the reply limit is
  /// refused before any secret is encrypted.
  private func getSecrets(_ items: PathList, session sessionPath: String, caller: String) throws -> DBusValue {
    let paths = try daemon.boundedPaths(items)
    let session = try daemon.session(at: sessionPath, caller: caller)
    var found: [(path: String, item: StoredItem)] = []
    var seen = Set<String>()
    var size = 0
    let limit = daemon.store.limits.maxReplySize
    for path in paths where seen.insert(path).inserted {
      guard let reference = try? daemon.resolveItem(path: path),
        let item = try? daemon.store.unlockedItem(reference)
      else { continue }
      // Each entry: the path twice, the IV, the (padded) secret, its content type, framing.
      size += 2 * path.utf8.count + item.secretCount + item.contentType.utf8.count + 64
      guard size <= limit else {
        throw DBusError.limitsExceeded(
          "the secrets of these \(paths.count) items pass secretd's answer limit of \(limit) bytes "
            + "(--max-reply-size); ask for fewer items per call")
      }
      found.append((path, item))
    }
    let entries = try found.map { path, item in
      DBusValue.dictEntry(
        .objectPath(path),
        try SecretWireFormat.make(
          daemon.store.secret(of: item), contentType: item.contentType, for: session, at: sessionPath))
    }
    return .tuple([.array(elementType: "{o(oayays)}", entries)])
  }

  /// ReadAlias(s name) -> (o collection), "/" when unset.
  private func readAlias(_ name: String) -> DBusValue {
    let path = daemon.store.resolveAlias(name).map(ObjectPaths.collection) ?? ObjectPaths.none
    return .tuple([.objectPath(path)])
  }

  /// SetAlias(s name, o collection); "/" removes the alias.
  private func setAlias(_ name: String, to path: String) throws -> DBusValue {
    let target: String?
    if path == ObjectPaths.none {
      target = nil
    } else {
      guard case .collection(let collection)? = ObjectNode(path: path) else {
        throw DBusError.noSuchObject("\(path) is not a collection")
      }
      target = try daemon.resolve(collection)
    }
    try daemon.store.setAlias(name, to: target)
    return .tuple([])
  }
}
