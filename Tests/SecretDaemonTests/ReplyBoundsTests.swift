// Every answer fits D-Bus: an answer past --max-reply-size is refused with LimitsExceeded
// (the bus would otherwise drop secretd, and every secret with it), paths per call are capped
// before any work, and collection names are short enough that listings fit at the item limit.
import CGio
import Foundation
import GLibBridge
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("answers that fit D-Bus")
struct ReplyBoundsTests {
  static let mebibyte = 1 << 20

  @Test("GetSecrets of 70 MiB is refused with LimitsExceeded naming --max-reply-size; the daemon keeps every item")
  func seventyMebibytes() async throws {
    try await withProvider(.secretd) { instance in
      let name = "org.example.secretd.big"
      let daemon = try startSecretd(on: instance, busName: name, ["--max-memory", "128M", "--allow-unlocked-memory"])
      defer { daemon.stop() }
      let client = try RawClient(address: instance.busAddress, destination: name)
      let session = try client.openPlainSession()
      let paths = try (0..<70).map { index in
        try client.createPlainItem(
          session: session, attributes: ["big": "\(index)"],
          secret: [UInt8](repeating: UInt8(index), count: Self.mebibyte))
      }
      let error = client.errorName(
        ObjectPaths.root, Interfaces.service, "GetSecrets", .tuple([.objectPaths(paths), .objectPath(session)]))
      #expect(error == "org.freedesktop.DBus.Error.LimitsExceeded")
      do throws(GLibError) {
        try client.call(
          ObjectPaths.root, Interfaces.service, "GetSecrets", .tuple([.objectPaths(paths), .objectPath(session)]))
      } catch {
        #expect(error.message.contains("--max-reply-size"), "\(error.message)")
      }
      // One item named 70 times is one answer of 1 MiB.
      let repeated = try client.call(
        ObjectPaths.root, Interfaces.service, "GetSecrets",
        .tuple([.objectPaths(Array(repeating: paths[3], count: 70)), .objectPath(session)]))
      #expect(repeated.child(0)?.childCount == 1)
      #expect(daemon.process.isRunning)
      for (index, path) in paths.enumerated() where index.isMultiple(of: 10) {
        #expect(
          try client.plainSecret(path, session: session) == [UInt8](repeating: UInt8(index), count: Self.mebibyte))
      }
    }
  }

  @Test("a call naming more than --max-paths paths is refused before any work")
  func pathsPerCall() async throws {
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      let paths = (1...10_001).map { "/org/freedesktop/secrets/collection/session/\($0)" }
      do throws(GLibError) {
        try client.call(
          ObjectPaths.root, Interfaces.service, "GetSecrets", .tuple([.objectPaths(paths), .objectPath(session)]))
        Issue.record("10,001 paths were accepted")
      } catch {
        #expect(error.remoteName == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(error.message.contains("--max-paths"), "\(error.message)")
      }
      #expect(
        client.errorName(ObjectPaths.root, Interfaces.service, "Lock", .tuple([.objectPaths(paths)]))
          == "org.freedesktop.DBus.Error.LimitsExceeded")
    }
  }

  @Test(
    "a collection labelled with 4,096 characters gets a name of at most 64 bytes, and its items answer Items and SearchItems"
  )
  func longCollectionLabel() async throws {
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      let label = String(repeating: "x", count: 4096)
      let created = try client.call(
        ObjectPaths.root, Interfaces.service, "CreateCollection",
        .tuple([
          .array(
            elementType: "{sv}",
            [.dictEntry(.string("org.freedesktop.Secret.Collection.Label"), .variant(.string(label)))]), .string(""),
        ]))
      let collection = try #require(created.child(0)?.string)
      #expect(collection.utf8.count <= ObjectPaths.collections.utf8.count + 1 + Store.maxCollectionNameLength)
      let session = try client.openPlainSession()
      for index in 0..<20 {
        try client.createPlainItem(session: session, collection: collection, attributes: ["n": "\(index)"], secret: [1])
      }
      let items = try client.call(
        collection, Interfaces.properties, "Get", .tuple([.string(Interfaces.collection), .string("Items")]))
      #expect(items.child(0)?.unboxed?.objectPaths?.count == 20)
      let label2 = try client.call(
        collection, Interfaces.properties, "Get", .tuple([.string(Interfaces.collection), .string("Label")]))
      #expect(label2.child(0)?.unboxed?.string == label)
      #expect(try client.search(["n": "7"]).count == 1)
    }
  }

  @Test("at the item limit, in a collection with the longest name, Items and SearchItems fit in one answer")
  func listingsFitAtTheItemLimit() throws {
    let store = try makeStore(limits: Limits(maxMemory: 32 << 20))
    let name = try store.createCollection(label: String(repeating: "y", count: 4096), alias: "")
    #expect(name.utf8.count <= Store.maxCollectionNameLength)
    let secret = sent([1])
    for index in 0..<store.limits.maxItems {
      _ = try store.createItem(
        in: name, label: "", attributes: ["n": "\(index)"], contentType: "", secret: secret, replace: false)
    }
    let paths = store.search([:]).unlocked.map(ObjectPaths.item)
    #expect(paths.count == store.limits.maxItems)
    let answer = g_variant_ref_sink(DBusValue.tuple([.objectPaths(paths), .objectPaths([])]).makeFloating())
    defer { g_variant_unref(answer) }
    let size = Int(g_variant_get_size(answer))
    #expect(size <= store.limits.maxReplySize, "\(size) bytes")
  }
}
