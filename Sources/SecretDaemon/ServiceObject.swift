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
        "OpenSession", in: [Argument("algorithm", "s"), Argument("input", "v")],
        out: [Argument("output", "v"), Argument("result", "o")], access: .none
      ) { service, arguments, context throws(DBusError) in try service.openSession(arguments, owner: context.sender) },
      Method(
        "CreateCollection", in: [Argument("properties", "a{sv}"), Argument("alias", "s")],
        out: [Argument("collection", "o"), Argument("prompt", "o")], access: .write
      ) { service, arguments, _ throws(DBusError) in try service.createCollection(arguments) },
      Method(
        "SearchItems", in: [Argument("attributes", "a{ss}")],
        out: [Argument("unlocked", "ao"), Argument("locked", "ao")], access: .read,
        cost: .boundedWhen { daemon, _, arguments in daemon.isSmallSearch(arguments.child(0)) }
      ) { service, arguments, _ throws(DBusError) in try service.searchItems(arguments) },
      Method(
        "Unlock", in: [Argument("objects", "ao")], out: [Argument("unlocked", "ao"), Argument("prompt", "o")],
        access: .write
      ) { service, arguments, context throws(DBusError) in
        try service.setLocked(arguments, locked: false, caller: context.sender)
      },
      Method(
        "Lock", in: [Argument("objects", "ao")], out: [Argument("locked", "ao"), Argument("Prompt", "o")],
        access: .write
      ) { service, arguments, context throws(DBusError) in
        try service.setLocked(arguments, locked: true, caller: context.sender)
      },
      Method(
        "GetSecrets", in: [Argument("items", "ao"), Argument("session", "o")],
        out: [Argument("secrets", "a{o(oayays)}")], access: .read,
        cost: .boundedWhen { daemon, _, arguments in daemon.areSmallSecrets(arguments.child(0)) }
      ) { service, arguments, context throws(DBusError) in try service.getSecrets(arguments, caller: context.sender) },
      Method("ReadAlias", in: [Argument("name", "s")], out: [Argument("collection", "o")], access: .read) {
        service, arguments, _ throws(DBusError) in try service.readAlias(arguments)
      },
      Method("SetAlias", in: [Argument("name", "s"), Argument("collection", "o")], access: .write) {
        service, arguments, _ throws(DBusError) in try service.setAlias(arguments)
      },
    ],
    properties: [
      Property("Collections", "ao") { service throws(DBusError) in
        .objectPaths(service.daemon.store.collectionNames.map(ObjectPaths.collection))
      }
    ],
    signals: ["CollectionCreated", "CollectionDeleted", "CollectionChanged"].map {
      SignalDeclaration($0, [Argument("collection", "o")])
    })

  /// OpenSession(s algorithm, v input) -> (v output, o result)
  private func openSession(_ arguments: Variant, owner: String) throws(DBusError) -> DBusValue {
    guard let algorithm = arguments.child(0)?.string, let input = arguments.child(1)?.unboxed else {
      throw .invalidArgs("OpenSession takes (sv)")
    }
    do throws(SessionError) {
      let (session, output) = try daemon.sessions.open(algorithm: algorithm, input: input, owner: owner)
      return .tuple([.variant(output), .objectPath(ObjectPaths.session(session.number))])
    } catch {
      throw DBusError(error)
    }
  }

  /// CreateCollection(a{sv} properties, s alias) -> (o collection, o prompt); never prompts.
  private func createCollection(_ arguments: Variant) throws(DBusError) -> DBusValue {
    guard let properties = arguments.child(0)?.variantDictionary, let alias = arguments.child(1)?.string else {
      throw .invalidArgs("CreateCollection takes (a{sv}s)")
    }
    var label = ""
    if let value = properties["org.freedesktop.Secret.Collection.Label"] {
      guard let text = value.string, value.isOfType("s") else {
        throw .invalidArgs("org.freedesktop.Secret.Collection.Label must be a string")
      }
      label = text
    }
    do throws(StoreError) {
      let name = try daemon.store.createCollection(label: label, alias: alias)
      Log.info("collection \(ObjectPaths.collection(name)) created")
      return .tuple([.objectPath(ObjectPaths.collection(name)), .objectPath(ObjectPaths.none)])
    } catch {
      throw DBusError(error)
    }
  }

  /// SearchItems(a{ss} attributes) -> (ao unlocked, ao locked)
  private func searchItems(_ arguments: Variant) throws(DBusError) -> DBusValue {
    guard let attributes = arguments.child(0)?.stringDictionary else { throw .invalidArgs("SearchItems takes (a{ss})") }
    do throws(StoreError) { try daemon.store.checkQuery(attributes) } catch { throw DBusError(error) }
    let found = daemon.store.search(attributes)
    return .tuple([
      .objectPaths(found.unlocked.map(ObjectPaths.item)), .objectPaths(found.locked.map(ObjectPaths.item)),
    ])
  }

  /// Unlock(ao) -> (ao unlocked, o prompt) and Lock(ao) -> (ao locked, o prompt).
  /// Memory-only collections have no password: only the sealed collection's unlock prompts,
  /// and its prompt completes when the user unlocks it (``UnlockPrompts``).
  private func setLocked(_ arguments: Variant, locked: Bool, caller: String) throws(DBusError) -> DBusValue {
    let paths = try daemon.boundedPaths(arguments.child(0))
    var done: [String] = []
    var waiting: [String] = []
    var refusal: StoreError?
    for path in paths {
      guard let collection = existingCollection(of: path) else { continue }
      do throws(StoreError) {
        try daemon.store.setLocked(collection, locked)
        done.append(path)
      } catch {
        guard case .needsPassphrase = error else { throw DBusError(error) }
        (waiting, refusal) = (waiting + [path], error)
      }
    }
    guard let refusal else { return .tuple([.objectPaths(done), .objectPath(ObjectPaths.none)]) }
    guard let number = daemon.unlockPrompts.open(objects: waiting, owner: caller) else { throw DBusError(refusal) }
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
  private func getSecrets(_ arguments: Variant, caller: String) throws(DBusError) -> DBusValue {
    let paths = try daemon.boundedPaths(arguments.child(0))
    guard let sessionPath = arguments.child(1)?.string else { throw .invalidArgs("GetSecrets takes (aoo)") }
    let session: TransferSession
    do throws(SessionError) { session = try daemon.sessions.session(at: sessionPath, caller: caller) } catch {
      throw DBusError(error)
    }
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
        throw .limitsExceeded(
          "the secrets of these \(paths.count) items pass secretd's answer limit of \(limit) bytes "
            + "(--max-reply-size); ask for fewer items per call")
      }
      found.append((path, item))
    }
    var entries: [DBusValue] = []
    for (path, item) in found {
      do throws(CryptoError) {
        let wire = try session.encode(daemon.store.secret(of: item), contentType: item.contentType, path: sessionPath)
        entries.append(.dictEntry(.objectPath(path), SecretWireFormat.make(wire)))
      } catch {
        throw DBusError(error)
      }
    }
    return .tuple([.array(elementType: "{o(oayays)}", entries)])
  }

  /// ReadAlias(s name) -> (o collection), "/" when unset.
  private func readAlias(_ arguments: Variant) throws(DBusError) -> DBusValue {
    guard let name = arguments.child(0)?.string else { throw .invalidArgs("ReadAlias takes (s)") }
    let path = daemon.store.resolveAlias(name).map(ObjectPaths.collection) ?? ObjectPaths.none
    return .tuple([.objectPath(path)])
  }

  /// SetAlias(s name, o collection); "/" removes the alias.
  private func setAlias(_ arguments: Variant) throws(DBusError) -> DBusValue {
    guard let name = arguments.child(0)?.string, let path = arguments.child(1)?.string else {
      throw .invalidArgs("SetAlias takes (so)")
    }
    let target: String?
    if path == ObjectPaths.none {
      target = nil
    } else {
      guard case .collection(let collection)? = ObjectNode(path: path) else {
        throw .noSuchObject("\(path) is not a collection")
      }
      target = try daemon.resolve(collection)
    }
    do throws(StoreError) { try daemon.store.setAlias(name, to: target) } catch { throw DBusError(error) }
    return .tuple([])
  }
}
