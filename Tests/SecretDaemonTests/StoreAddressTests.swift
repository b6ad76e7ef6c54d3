// secretd decides which item an address names by the client's own rule (AddressRule): for
// CreateItem with replace, and for the credential a unit is given.
import SecretMemory
import Testing

@testable import SecretDaemon

@Suite("the store: which item an address names")
struct StoreAddressTests {
  static let later = "4102444800"

  @Test(
    "CreateItem with replace overwrites the item the attributes name whatever its schema and expiry, which take the new ones"
  )
  func replaceFindsTheNamedItemAndGivesItTheNewAttributes() throws {
    let store = try makeStore()
    let first = try store.createItem(
      in: "session", label: "t", attributes: ["service": "s", "xdg:expires": Self.later], contentType: "",
      secret: sent("1"), replace: false)
    let written = ["service": "s", "xdg:schema": "org.freedesktop.Secret.Generic"]
    let second = try store.createItem(
      in: "session", label: "t", attributes: written, contentType: "", secret: sent("2"), replace: true)
    #expect(second.replaced && second.item == first.item)
    #expect(store.itemCount == 1)
    let item = try store.item(ItemReference(collection: "session", item: first.item))
    #expect(item.attributes == written)
    #expect(item.expiresAt == nil, "written without an expiry, the item no longer expires")
    #expect(store.search(["xdg:schema": "org.freedesktop.Secret.Generic"]).unlocked.count == 1, "indexed anew")
    #expect(store.search(["xdg:expires": Self.later]).unlocked.isEmpty, "the old attributes left the index")
  }

  @Test("CreateItem with replace leaves an item with one attribute more alone, an xdg: one too")
  func replaceLeavesAnItemWithMoreAttributesAlone() throws {
    let store = try makeStore()
    for extra in ["account", "xdg:origin"] {
      _ = try store.createItem(
        in: "session", label: "t", attributes: ["service": "s", extra: "a"], contentType: "", secret: sent("1"),
        replace: false)
    }
    let written = try store.createItem(
      in: "session", label: "t", attributes: ["service": "s"], contentType: "", secret: sent("2"), replace: true)
    #expect(!written.replaced)
    #expect(store.itemCount == 3)
  }

  @Test(
    "a unit's credential is the item its address names: an expiry or a schema does not hide it, one attribute more does"
  )
  func credentialsAreFoundByTheirAddress() throws {
    let store = try makeStore()
    let items: [([String: String], String)] = [
      (["credential": "own", "unit": "app.service", "xdg:expires": Self.later], "own"),
      (["credential": "shared", "xdg:schema": "org.freedesktop.Secret.Generic"], "shared"),
      (["credential": "tagged", "unit": "app.service", "note": "x"], "tagged"),
      (["credential": "tagged", "note": "x"], "tagged, shared"),
    ]
    for (attributes, secret) in items {
      _ = try store.createItem(
        in: "session", label: secret, attributes: attributes, contentType: "text/plain", secret: sent(secret),
        replace: false)
    }
    #expect(try found(store.credential("own", for: "app.service")) == secretBytes(Array("own".utf8)))
    #expect(try found(store.credential("shared", for: "app.service")) == secretBytes(Array("shared".utf8)))
    #expect(found(store.credential("tagged", for: "app.service")) == nil)
  }

  private func found(_ lookup: CredentialLookup) -> SecretBytes? {
    if case .found(let bytes) = lookup { return bytes }
    return nil
  }
}
