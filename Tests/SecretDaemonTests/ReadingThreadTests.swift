// The thread that reads the bus answers a call itself only when the call's declared work is
// small for its arguments: a listing, a search or a read that grows with the store always goes
// to a worker, so one client's large request never holds up the bus for the others.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("the reading thread")
struct ReadingThreadTests {
  /// A daemon on a bus of its own, never started: only its rules are asked.
  static func daemon() throws -> (Daemon, PrivateBus) {
    let bus = try PrivateBus()
    let connection = try BusConnection(address: bus.address)
    let configuration = Configuration(limits: Limits(maxMemory: 1 << 20), allowUnlockedMemory: true)
    let keeper = try StoreKeeper(configuration: configuration, inherited: [])
    return (Daemon(connection: connection, configuration: configuration, keeper: keeper), bus)
  }

  static func arguments(_ values: [DBusValue]) -> Variant { Variant(adopting: DBusValue.tuple(values).makeFloating()) }

  @Test("listings, introspection and searches or reads that grow with the store go to a worker; small ones need not")
  func onlyBoundedCallsAreQuick() throws {
    let (daemon, bus) = try Self.daemon()
    defer { bus.stop() }
    let many = Daemon.smallCallItems + 1
    for index in 0..<many {
      _ = try daemon.store.createItem(
        in: "session", label: "", attributes: ["group": "many", "n": "\(index)"], contentType: "text/plain",
        secret: sent("s\(index)"), replace: false)
    }
    let large = try daemon.store.createItem(
      in: "session", label: "", attributes: ["large": "yes"], contentType: "text/plain",
      secret: sent([UInt8](repeating: 7, count: Daemon.smallCallSecretBytes + 1)), replace: false)
    let largePath = ObjectPaths.item(ItemReference(collection: "session", item: large.item))
    let smallPath = ObjectPaths.item(ItemReference(collection: "session", item: 1))
    let collection = ObjectPaths.collection("session")
    func quick(_ path: String, _ interface: String, _ member: String, _ values: [DBusValue] = []) -> Bool {
      daemon.weight(path: path, interface: interface, member: member, arguments: Self.arguments(values)) == .quick
    }
    let session = DBusValue.objectPath("/org/freedesktop/secrets/session/s1")

    // Small: the reading thread may answer them.
    #expect(quick(ObjectPaths.root, Interfaces.service, "SearchItems", [.stringDictionary(["n": "3"])]))
    #expect(quick(collection, Interfaces.collection, "SearchItems", [.stringDictionary(["n": "3"])]))
    #expect(quick(smallPath, Interfaces.item, "GetSecret", [session]))
    #expect(quick(ObjectPaths.root, Interfaces.service, "GetSecrets", [.objectPaths([smallPath]), session]))
    #expect(quick(smallPath, Interfaces.properties, "GetAll", [.string(Interfaces.item)]))
    #expect(quick(collection, Interfaces.properties, "Get", [.string(Interfaces.collection), .string("Label")]))
    #expect(quick(ObjectPaths.root, Interfaces.service, "ReadAlias", [.string("default")]))
    // Growing with the store or the arguments: always a worker.
    #expect(!quick(ObjectPaths.root, Interfaces.service, "SearchItems", [.stringDictionary(["group": "many"])]))
    #expect(!quick(ObjectPaths.root, Interfaces.service, "SearchItems", [.stringDictionary([:])]))
    #expect(!quick(collection, Interfaces.collection, "SearchItems", [.stringDictionary(["group": "many"])]))
    #expect(!quick(collection, Interfaces.introspectable, "Introspect"))
    #expect(!quick(collection, Interfaces.properties, "GetAll", [.string(Interfaces.collection)]))
    #expect(!quick(collection, Interfaces.properties, "Get", [.string(Interfaces.collection), .string("Items")]))
    #expect(!quick(largePath, Interfaces.item, "GetSecret", [session]))
    #expect(!quick(ObjectPaths.root, Interfaces.service, "GetSecrets", [.objectPaths([largePath]), session]))
    let paths = (1...many).map { ObjectPaths.item(ItemReference(collection: "session", item: $0)) }
    #expect(!quick(ObjectPaths.root, Interfaces.service, "GetSecrets", [.objectPaths(paths), session]))
    // Writes never run there.
    #expect(!quick(smallPath, Interfaces.item, "Delete"))
  }
}
