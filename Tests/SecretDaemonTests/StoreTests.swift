import SecretTestSupport
import Testing

// The store without D-Bus: index, replace, aliases, bounds.
@testable import SecretDaemon

@Suite("store")
struct StoreTests {
  @Test("indexed search finds exactly the items carrying every attribute")
  func search() throws {
    let store = try makeStore()
    for index in 0..<500 {
      _ = try store.createItem(
        in: "session", label: "\(index)",
        attributes: ["parity": "\(index % 2)", "tens": "\(index / 10)", "id": "\(index)"],
        contentType: "text/plain", secret: sent("s\(index)"), replace: false)
    }
    #expect(store.search(["parity": "0"]).unlocked.count == 250)
    #expect(store.search(["parity": "1", "tens": "3"]).unlocked.count == 5)
    #expect(store.search(["id": "42"]).unlocked.count == 1)
    #expect(store.search(["id": "42", "parity": "1"]).unlocked.isEmpty)
    #expect(store.search(["nope": "x"]).unlocked.isEmpty)
    #expect(store.search([:]).unlocked.count == 500)
  }

  @Test("replace overwrites only the item with exactly the same attributes")
  func replace() throws {
    let store = try makeStore()
    let first = try store.createItem(
      in: "session", label: "a", attributes: ["s": "1", "a": "x"], contentType: "", secret: sent("1"),
      replace: true)
    let wider = try store.createItem(
      in: "session", label: "b", attributes: ["s": "1", "a": "x", "extra": "y"], contentType: "",
      secret: sent("2"), replace: true)
    let again = try store.createItem(
      in: "session", label: "c", attributes: ["s": "1", "a": "x"], contentType: "", secret: sent("3"),
      replace: true)
    #expect(first.item == again.item && again.replaced)
    #expect(wider.item != first.item && !wider.replaced)
    #expect(store.itemCount == 2)
    let item = try store.item(ItemReference(collection: "session", item: first.item))
    #expect(item.label == "c")
    #expect(Array(store.secret(of: item)) == Array("3".utf8))
  }

  @Test("bounds are answered with the limit's flag")
  func bounds() throws {
    var limits = Limits()
    (limits.maxSecretSize, limits.maxAttributes, limits.maxAttributeLength, limits.maxItems) = (8, 2, 5, 2)
    let store = try makeStore(limits: limits)
    #expect(throws: StoreError.limitExceeded(.secretSize, actual: 9, maximum: 8)) {
      try store.createItem(
        in: "session", label: "", attributes: [:], contentType: "", secret: sent("123456789"), replace: false)
    }
    #expect(throws: StoreError.limitExceeded(.attributes, actual: 3, maximum: 2)) {
      try store.createItem(
        in: "session", label: "", attributes: ["a": "", "b": "", "c": ""], contentType: "", secret: sent("1"),
        replace: false)
    }
    #expect(throws: StoreError.limitExceeded(.attributeLength, actual: 6, maximum: 5)) {
      try store.createItem(
        in: "session", label: "", attributes: ["a": "123456"], contentType: "", secret: sent("1"),
        replace: false)
    }
    _ = try store.createItem(
      in: "session", label: "", attributes: ["n": "1"], contentType: "", secret: sent("1"), replace: false)
    _ = try store.createItem(
      in: "session", label: "", attributes: ["n": "2"], contentType: "", secret: sent("1"), replace: false)
    #expect(throws: StoreError.limitExceeded(.items, actual: 3, maximum: 2)) {
      try store.createItem(
        in: "session", label: "", attributes: ["n": "3"], contentType: "", secret: sent("1"), replace: false)
    }
    // Replacing does not count as a new item.
    #expect(
      try store.createItem(
        in: "session", label: "", attributes: ["n": "2"], contentType: "", secret: sent("2"), replace: true
      ).replaced)
    let message = DBusError(StoreError.limitExceeded(.items, actual: 3, maximum: 2)).message
    #expect(message.contains("--max-items"))
  }

  @Test("collections, aliases and locking")
  func collections() throws {
    let store = try makeStore()
    #expect(store.resolveAlias("default") == "session")
    let name = try store.createCollection(label: "My Keys!", alias: "work")
    #expect(name == "my_keys_")
    #expect(try store.createCollection(label: "other", alias: "work") == name)
    #expect(store.resolveAlias("work") == name)
    try store.setLocked(name, true)
    #expect(throws: StoreError.locked(collection: name)) {
      try store.createItem(
        in: name, label: "", attributes: [:], contentType: "", secret: sent("x"), replace: false)
    }
    try store.setLocked(name, false)
    _ = try store.createItem(
      in: name, label: "", attributes: ["z": "1"], contentType: "", secret: sent("x"), replace: false)
    try store.deleteCollection(name)
    #expect(store.resolveAlias("work") == nil)
    #expect(store.itemCount == 0)
  }

  @Test("a locked collection cannot be deleted over the bus, as none of its items can; unlocked, it can")
  func lockedCollectionIsNotDeleted() async throws {
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      let reply = try client.call(
        ObjectPaths.root, Interfaces.service, "CreateCollection",
        .tuple([
          .array(
            elementType: "{sv}",
            [.dictEntry(.string("org.freedesktop.Secret.Collection.Label"), .variant(.string("vault")))]),
          .string(""),
        ]))
      let collection = try #require(reply.child(0)?.string)
      let item = try client.createPlainItem(
        session: session, collection: collection, attributes: ["kept": "yes"], secret: Array("inside".utf8))
      try client.call(ObjectPaths.root, Interfaces.service, "Lock", .tuple([.objectPaths([collection])]))
      #expect(
        client.errorName(item, Interfaces.item, "Delete", .tuple([])) == "org.freedesktop.Secret.Error.IsLocked")
      #expect(
        client.errorName(collection, Interfaces.collection, "Delete", .tuple([]))
          == "org.freedesktop.Secret.Error.IsLocked")
      try client.call(ObjectPaths.root, Interfaces.service, "Unlock", .tuple([.objectPaths([collection])]))
      #expect(try client.plainSecret(item, session: session) == Array("inside".utf8))
      #expect(client.errorName(collection, Interfaces.collection, "Delete", .tuple([])) == nil)
      #expect(try client.search(["kept": "yes"]).isEmpty)
    }
  }
}
