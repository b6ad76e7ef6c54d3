// Object paths are canonical and never reused: one path names one object, for ever.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("object paths")
struct ObjectPathTests {
  @Test("numbers in paths are canonical: a leading zero or a sign names nothing")
  func canonicalNumbers() {
    #expect(ObjectNode(path: "/org/freedesktop/secrets/collection/session/7") == .item(.named("session"), 7))
    for path in [
      "/org/freedesktop/secrets/collection/session/07", "/org/freedesktop/secrets/collection/session/+7",
      "/org/freedesktop/secrets/collection/session/0", "/org/freedesktop/secrets/aliases/default/007",
      "/org/freedesktop/secrets/session/s01", "/org/freedesktop/secrets/session/s+1",
    ] {
      #expect(ObjectNode(path: path) == nil, "\(path)")
    }
  }

  @Test("over the bus, an item's path with a leading zero is not that item")
  func leadingZeroOverTheBus() async throws {
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      let item = try client.createPlainItem(session: session, attributes: ["k": "v"], secret: [1])
      let number = try #require(item.split(separator: "/").last)
      let padded = item.dropLast(number.count) + "0" + number
      #expect(
        client.errorName(String(padded), Interfaces.item, "GetSecret", .tuple([.objectPath(session)]))
          == "org.freedesktop.DBus.Error.UnknownMethod")
      #expect(try client.plainSecret(item, session: session) == [1])
    }
  }

  @Test(
    "a call to a path where no object is gets the answer GDBus gives, as from gnome-keyring",
    arguments: Provider.all)
  func noObjectAtPath(provider: Provider) async throws {
    try await withProvider(provider) { instance in
      let client = try RawClient(address: instance.busAddress)
      for path in [
        "/not/existing/path", "/org/freedesktop/secrets/collection/nope",
        "/org/freedesktop/secrets/collection/session/99999", "/org/freedesktop/secrets/collection/session/07",
      ] {
        do throws(GLibError) {
          try client.call(path, Interfaces.properties, "Get", .tuple([.string(Interfaces.item), .string("Label")]))
          Issue.record("\(path) answered")
        } catch {
          #expect(error.remoteName == "org.freedesktop.DBus.Error.UnknownMethod", "\(path): \(error)")
          #expect(error.message.hasSuffix("Object does not exist at path “\(path)”"), "\(path): \(error)")
        }
      }
    }
  }

  @Test("a deleted and recreated collection never gives an old item's path to a new item")
  func noReuse() throws {
    let store = try makeStore()
    let first = try store.createCollection(label: "work", alias: "")
    let old = try store.createItem(
      in: first, label: "", attributes: ["a": "1"], contentType: "", secret: sent("1"), replace: false)
    try store.deleteCollection(first)
    let second = try store.createCollection(label: "work", alias: "")
    #expect(second == first)
    let new = try store.createItem(
      in: second, label: "", attributes: ["a": "1"], contentType: "", secret: sent("2"), replace: false)
    #expect(new.item != old.item)
    #expect(
      ObjectPaths.item(ItemReference(collection: second, item: new.item))
        != ObjectPaths.item(ItemReference(collection: first, item: old.item)))
  }
}
