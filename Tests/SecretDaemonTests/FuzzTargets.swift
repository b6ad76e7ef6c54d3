// What the fuzzer aims at: live objects of secretd that it makes first (collections, by name and
// by alias, items, sessions of the fuzzing connection with their keys, aliases), remade as
// fuzzed calls delete them, and paths near them that name nothing. It never names the one
// collection whose items the test checks at the end.
import Foundation
import GLibBridge
import SecretMemory
import Testing
import TransferCrypto

@testable import SecretDaemon

final class FuzzTargets {
  /// A session of the fuzzing connection, with its AES key when it is a DH session.
  struct Session {
    let path: String
    let key: SecretBytes?
  }

  /// A secret an item is known to hold: the last one a call stored in it.
  struct StoredSecret: Equatable {
    let bytes: [UInt8]
    let contentType: String
  }

  /// The aliases calls name, and the attributes items are made with and searched by.
  static let aliasNames = ["default", "session", "fuzz_a", "fuzz_b"]
  static let attributeNames = ["service", "account", "fuzz", "xdg:schema"]
  static let attributeValues = ["a", "b", "c", ""]
  /// secretd never makes a prompt: calls on these paths are answered "no object".
  static let prompts = [ObjectPaths.prompt(1), ObjectPaths.prompt(7)]
  static let containers = ["collection", "aliases", "session", "prompt"].map { ObjectPaths.root + "/" + $0 }

  let client: RawClient
  let random: FuzzRandom
  /// The collection no call may name.
  let protected: String
  /// A session of another connection, which no call of this one may use.
  let foreignSession: String
  private(set) var collections: [String] = []
  private(set) var items: [String] = []
  private(set) var aliases: [(name: String, collection: String)] = []
  /// Collections that fuzzed calls locked, the earliest first.
  private(set) var locked: [String] = []
  private(set) var sessions: [Session] = []
  private(set) var closedSessions: [String] = []
  /// Collections and items deleted in this run.
  private(set) var deleted: [String] = []
  /// What items hold, by canonical path, where the fuzzer knows it.
  private(set) var secrets: [String: StoredSecret] = [:]
  /// Calls made to keep targets alive, besides the fuzzed ones.
  private(set) var upkeepCalls = 0
  private var aliasesChanged = false
  private var callsSinceRefresh = 0

  init(client: RawClient, foreignSession: String, protected: String, random: FuzzRandom) throws {
    self.client = client
    self.foreignSession = foreignSession
    self.protected = protected
    self.random = random
    try refresh()
  }

  // MARK: Paths

  /// A path of a live object that implements `interface`, or now and then one that names nothing.
  func path(implementing interface: String) -> String {
    if random.chance(0.12) { return strayPath() }
    let groups = liveGroups().filter { group in ObjectNode(path: group[0])?.allInterfaces.contains(interface) ?? false }
    return groups.isEmpty ? strayPath() : random.pick(random.pick(groups))
  }

  /// Any live object's path, or one that names nothing.
  func anyPath() -> String {
    random.chance(0.2) ? strayPath() : random.pick(random.pick(liveGroups()))
  }

  /// A live item's path (by its collection's name or an alias), else any path.
  func itemPath() -> String {
    let items = items + aliasedItems()
    return items.isEmpty ? anyPath() : random.pick(items)
  }

  /// A live collection's path (by name or by alias), else any path.
  func collectionPath() -> String {
    let collections = collections + aliases.map { ObjectPaths.alias($0.name) }
    return collections.isEmpty ? anyPath() : random.pick(collections)
  }

  /// Live objects by kind; each group is of one kind, so its first path tells its interfaces.
  private func liveGroups() -> [[String]] {
    [
      [ObjectPaths.root], Self.containers, collections, aliases.map { ObjectPaths.alias($0.name) }, items,
      aliasedItems(), sessions.map(\.path) + [foreignSession], Self.prompts,
    ].filter { !$0.isEmpty }
  }

  /// Items by the alias of their collection.
  private func aliasedItems() -> [String] {
    aliases.flatMap { alias in
      items.filter { $0.hasPrefix(alias.collection + "/") }.map {
        ObjectPaths.alias(alias.name) + $0.dropFirst(alias.collection.count)
      }
    }
  }

  /// A valid object path that names nothing, or an object of another kind.
  private func strayPath() -> String {
    let collection = collections.first ?? ObjectPaths.collection("session")
    return random.pick([
      random.pick(deleted + closedSessions + [ObjectPaths.root]), random.pick(random.pick(liveGroups())),
      collection + "/999999", collection + "/0", collection + "/07", collection + "/x", collection + "/1/2",
      ObjectPaths.collection("nothing_here"), ObjectPaths.alias("unset"), "/", "/org/freedesktop",
      ObjectPaths.root + "/unknown", ObjectPaths.sessions + "/s0", ObjectPaths.session(999_999),
      ObjectPaths.prompts + "/p0", ObjectPaths.prompts + "/px",
      ObjectPaths.collections + "/" + String(repeating: "a", count: 300),
    ])
  }

  /// The path that `path` names without aliases, as the fuzzer knows them.
  func canonical(_ path: String) -> String {
    switch ObjectNode(path: path) {
    case .collection(.alias(let name))?:
      return aliases.first { $0.name == name }?.collection ?? path
    case .item(.alias(let name), let number)?:
      return aliases.first { $0.name == name }.map { $0.collection + "/\(number)" } ?? path
    default:
      return path
    }
  }

  func isClosedSession(_ path: String) -> Bool { closedSessions.contains(path) }

  // MARK: Learning from answers

  /// Updates the targets from a fuzzed call that succeeded.
  func learn(from call: FuzzCall, reply: Variant) throws {
    switch (call.interface, call.member) {
    case (Interfaces.service, "OpenSession"):
      if let session = try session(openedBy: reply, keyPair: call.keyPair) { sessions.append(session) }
    case (Interfaces.service, "CreateCollection"):
      if let path = reply.child(0)?.string, !collections.contains(path) { collections.append(path) }
      aliasesChanged = true
    case (Interfaces.service, "SetAlias"):
      aliasesChanged = true
    case (Interfaces.service, "Lock"), (Interfaces.service, "Unlock"):
      for collection in (reply.child(0)?.objectPaths ?? []).compactMap(collection(of:)) {
        locked.removeAll { $0 == collection }
        if call.member == "Lock" { locked.append(collection) }
      }
    case (Interfaces.collection, "Delete"):
      forgetCollection(canonical(call.path))
    case (Interfaces.collection, "CreateItem"):
      guard let path = reply.child(0)?.string else { return }
      if !items.contains(path) { items.append(path) }
      secrets[path] = call.sentSecret
    case (Interfaces.item, "SetSecret"):
      secrets[canonical(call.path)] = call.sentSecret
    case (Interfaces.item, "Delete"):
      forgetItem(canonical(call.path))
    case (Interfaces.session, "Close"):
      sessions.removeAll { $0.path == call.path }
      closedSessions.append(call.path)
    default:
      break
    }
  }

  /// The collection `path` names, or holds the item `path` names.
  private func collection(of path: String) -> String? {
    switch ObjectNode(path: canonical(path)) {
    case .collection(.named(let name))?, .item(.named(let name), _)?: ObjectPaths.collection(name)
    default: nil
    }
  }

  private func forgetCollection(_ path: String) {
    collections.removeAll { $0 == path }
    locked.removeAll { $0 == path }
    for item in items where item.hasPrefix(path + "/") { forgetItem(item) }
    aliases.removeAll { $0.collection == path }
    deleted.append(path)
  }

  private func forgetItem(_ path: String) {
    items.removeAll { $0 == path }
    secrets[path] = nil
    deleted.append(path)
  }

  /// The session an OpenSession answer opened, with the key agreed when it is a DH session whose
  /// key pair the fuzzer made; nil when it cannot be used.
  private func session(openedBy reply: Variant, keyPair: DiffieHellman.KeyPair?) throws -> Session? {
    guard let path = reply.child(1)?.string, let output = reply.child(0)?.unboxed else { return nil }
    if output.isOfType("s") { return Session(path: path, key: nil) }
    guard let keyPair, let serverKey = output.publicBytes else { return nil }
    return Session(path: path, key: try serverKey.withUnsafeBytes { try KeyAgreement.deriveKey(keyPair, peerKey: $0) })
  }

  // MARK: Upkeep

  /// Makes what fuzzed calls deleted, before the next call: sessions of both kinds, collections,
  /// items, an alias; unlocks all but one locked collection; reads the daemon's tree again every
  /// 200 calls (items expire, attributes make a replaced item).
  func upkeep() throws {
    callsSinceRefresh += 1
    if callsSinceRefresh >= 200 {
      try refresh()
    } else if aliasesChanged {
      try refreshAliases()
    }
    while sessions.count > 16 {
      let oldest = sessions.removeFirst()
      _ = try? upkeepCall(oldest.path, Interfaces.session, "Close", .tuple([]))
      closedSessions.append(oldest.path)
    }
    if !sessions.contains(where: { $0.key == nil }) { sessions.append(try openSession(dh: false)) }
    if !sessions.contains(where: { $0.key != nil }) { sessions.append(try openSession(dh: true)) }
    while locked.count > 1 { try unlock(locked.removeFirst()) }
    while collections.count > 8 { try deleteCollection(collections[0]) }
    while collections.count < 2 { try createCollection() }
    var attempts = 0
    while items.count < 6 {
      attempts += 1
      try #require(attempts <= 10, "secretd refused small items even after collections were deleted")
      try createItem()
    }
    if aliases.isEmpty {
      try upkeepCall(
        ObjectPaths.root, Interfaces.service, "SetAlias",
        .tuple([.string(random.pick(Self.aliasNames)), .objectPath(random.pick(collections))]))
      try refreshAliases()
    }
  }

  /// Reads the collections (but the protected one), their items and the aliases from the daemon.
  private func refresh() throws {
    callsSinceRefresh = 0
    collections = try property(ObjectPaths.root, Interfaces.service, "Collections").filter { $0 != protected }
    items = try collections.flatMap { try property($0, Interfaces.collection, "Items") }
    secrets = secrets.filter { items.contains($0.key) }
    try refreshAliases()
  }

  private func refreshAliases() throws {
    aliasesChanged = false
    aliases = try Self.aliasNames.compactMap { name in
      let reply = try upkeepCall(ObjectPaths.root, Interfaces.service, "ReadAlias", .tuple([.string(name)]))
      guard let collection = reply.child(0)?.string, collections.contains(collection) else { return nil }
      return (name, collection)
    }
  }

  private func property(_ path: String, _ interface: String, _ name: String) throws -> [String] {
    let reply = try upkeepCall(
      path, Interfaces.properties, "Get", .tuple([.string(interface), .string(name)]))
    return try #require(reply.child(0)?.unboxed?.objectPaths, "\(interface).\(name) of \(path)")
  }

  private func openSession(dh: Bool) throws -> Session {
    let keyPair = dh ? try DiffieHellman.makeKeyPair() : nil
    let input: DBusValue = keyPair.map { .variant(.bytes($0.publicKey)) } ?? .variant(.string(""))
    let algorithm = dh ? TransferSession.Algorithm.dh : .plain
    let reply = try upkeepCall(
      ObjectPaths.root, Interfaces.service, "OpenSession", .tuple([.string(algorithm.rawValue), input]))
    return try #require(try session(openedBy: reply, keyPair: keyPair))
  }

  private func createCollection() throws {
    let reply = try upkeepCall(
      ObjectPaths.root, Interfaces.service, "CreateCollection",
      .tuple([
        .array(
          elementType: "{sv}", [.dictEntry(.string(Interfaces.collection + ".Label"), .variant(.string("fuzz")))]),
        .string(""),
      ]))
    collections.append(try #require(reply.child(0)?.string))
  }

  /// Deletes a collection, unlocked first (a locked one cannot be deleted).
  private func deleteCollection(_ path: String) throws {
    try unlock(path)
    try upkeepCall(path, Interfaces.collection, "Delete", .tuple([]))
    forgetCollection(path)
  }

  /// Stores a small secret through the plain session in an unlocked collection; when the store is
  /// full, deletes the collection holding the most items first.
  private func createItem() throws {
    while collections.count < 2 { try createCollection() }
    let collection = random.pick(collections)
    let session = try #require(sessions.first { $0.key == nil })
    let secret = StoredSecret(bytes: random.bytes(random.int(1...64)), contentType: "text/plain")
    try unlock(collection)
    let created = Result { () throws(GLibError) in
      try client.createPlainItem(
        session: session.path, collection: collection, label: "fuzz",
        attributes: [random.pick(Self.attributeNames): random.pick(Self.attributeValues)], secret: secret.bytes,
        replace: false)
    }
    upkeepCalls += 1
    switch created {
    case .success(let path):
      items.append(path)
      secrets[path] = secret
    case .failure(let error) where error.remoteName == "org.freedesktop.DBus.Error.LimitsExceeded":
      let fullest = collections.max { itemCount(in: $0) < itemCount(in: $1) }
      try deleteCollection(try #require(fullest))
    case .failure(let error):
      throw error
    }
  }

  private func unlock(_ collection: String) throws {
    try upkeepCall(ObjectPaths.root, Interfaces.service, "Unlock", .tuple([.objectPaths([collection])]))
    locked.removeAll { $0 == collection }
  }

  private func itemCount(in collection: String) -> Int { items.count(where: { $0.hasPrefix(collection + "/") }) }

  @discardableResult
  private func upkeepCall(_ path: String, _ interface: String, _ method: String, _ arguments: DBusValue)
    throws(GLibError) -> Variant
  {
    upkeepCalls += 1
    return try client.call(path, interface, method, arguments)
  }
}
