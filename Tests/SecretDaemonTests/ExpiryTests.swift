// Items with an expiry disappear on time, with ItemDeleted, and are never read after it.
import Foundation
import GLibBridge
import SecretClient
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("expiry")
struct ExpiryTests {
  @Test("expires-at and xdg:expires remove items with events; reads never see them (injected clock)")
  func injectedClock() throws {
    let clock = ManualExpiryClock(1_000)
    let store = try makeStore(clock: clock)
    var events: [StoreEvent] = []
    store.onEvent = { events.append($0) }
    let a = try store.createItem(
      in: "session", label: "a", attributes: ["expires-at": "1010", "k": "a"], contentType: "text/plain",
      secret: sent("a"), replace: false)
    let b = try store.createItem(
      in: "session", label: "b", attributes: ["xdg:expires": "1020", "k": "b"], contentType: "text/plain",
      secret: sent("b"), replace: false)
    let c = try store.createItem(
      in: "session", label: "c", attributes: ["k": "c"], contentType: "text/plain", secret: sent("c"),
      replace: false)
    #expect(store.purgeExpired() == 1010)
    clock.advance(by: 10)
    // Expired but not yet purged: no read returns it.
    #expect(store.search(["k": "a"]).unlocked.isEmpty)
    #expect(throws: StoreError.self) { try store.item(ItemReference(collection: "session", item: a.item)) }
    #expect(store.purgeExpired() == 1020)
    #expect(events.last == .itemDeleted(ItemReference(collection: "session", item: a.item)))
    clock.advance(by: 100)
    #expect(store.purgeExpired() == nil)
    #expect(events.last == .itemDeleted(ItemReference(collection: "session", item: b.item)))
    #expect(store.itemCount == 1)
    #expect(try store.item(ItemReference(collection: "session", item: c.item)).label == "c")
    #expect(throws: StoreError.invalidExpiry(attribute: "expires-at", value: "soon")) {
      try store.createItem(
        in: "session", label: "d", attributes: ["expires-at": "soon"], contentType: "", secret: sent("d"),
        replace: false)
    }
  }

  @Test("default TTL applies to items without an expiry attribute")
  func defaultTTL() throws {
    let clock = ManualExpiryClock(500)
    let store = try makeStore(clock: clock, defaultTTL: 60)
    _ = try store.createItem(
      in: "session", label: "t", attributes: ["k": "v"], contentType: "", secret: sent("t"), replace: false)
    clock.advance(by: 59)
    #expect(store.search(["k": "v"]).unlocked.count == 1)
    clock.advance(by: 1)
    #expect(store.search(["k": "v"]).unlocked.isEmpty)
    store.purgeExpired()
    #expect(store.itemCount == 0)
  }

  @Test("rewriting an item under a default TTL keeps the expiry queue bounded by the items, and the latest time wins")
  func rewritesDoNotGrowTheQueue() throws {
    let clock = ManualExpiryClock(1_000)
    let store = try makeStore(clock: clock, defaultTTL: 86_400)
    for _ in 0..<10_000 {
      clock.advance(by: 1)
      _ = try store.createItem(
        in: "session", label: "t", attributes: ["k": "v"], contentType: "", secret: sent("t"), replace: true)
    }
    #expect(store.itemCount == 1)
    #expect(store.pendingExpiries <= 2 * store.itemCount + 65)
    // Entries for earlier writes come up first and must not delete the rewritten item.
    clock.advance(by: 86_399)
    store.purgeExpired()
    #expect(store.itemCount == 1)
    clock.advance(by: 1)
    store.purgeExpired()
    #expect(store.itemCount == 0)
  }

  @Test("an item given an expiry before every other re-arms the timer even when its change rebuilds the expiry queue")
  func anEarlierExpiryReArmsTheTimerAcrossARebuild() throws {
    let clock = ManualExpiryClock(1_000)
    let store = try makeStore(clock: clock, defaultTTL: 86_400)
    var armed: [UInt64?] = []
    store.onNextExpiryChanged = { armed.append($0) }
    let item = try store.createItem(
      in: "session", label: "t", attributes: ["k": "v"], contentType: "", secret: sent("t"), replace: true)
    #expect(armed == [1_000 + 86_400])
    // Rewrites leave stale entries behind, up to where the next change rebuilds the queue.
    while store.pendingExpiries <= 2 * store.itemCount + 64 {
      clock.advance(by: 1)
      _ = try store.createItem(
        in: "session", label: "t", attributes: ["k": "v"], contentType: "", secret: sent("t"), replace: true)
    }
    let soon = clock.now() + 10
    try store.setAttributes(
      ItemReference(collection: "session", item: item.item), ["k": "v", "expires-at": String(soon)])
    // Rebuilt from the one item, which holds its new time once.
    #expect(store.pendingExpiries == 1)
    #expect(armed.last == soon)
  }

  @Test("an item whose time comes while a call on it is being answered is no object at its path, as a moment later")
  func itemExpiringDuringACallIsNoObjectAtItsPath() throws {
    let clock = ManualExpiryClock(1_000)
    let bus = try PrivateBus()
    defer { bus.stop() }
    let configuration = Configuration(limits: Limits(maxMemory: 1 << 20), allowUnlockedMemory: true)
    let daemon = Daemon(
      connection: try BusConnection(address: bus.address), configuration: configuration,
      keeper: try StoreKeeper(configuration: configuration, inherited: [], clock: clock))
    let created = try daemon.store.createItem(
      in: "session", label: "e", attributes: ["expires-at": "1005"], contentType: "text/plain", secret: sent("e"),
      replace: false)
    let path = ObjectPaths.item(ItemReference(collection: "session", item: created.item))
    let context = CallContext(sender: ":1.7")
    let (session, _) = try daemon.sessions.open(
      algorithm: "plain", clientKey: nil, owner: context.sender)
    let sessionPath = Variant(
      adopting: DBusValue.tuple([.objectPath(ObjectPaths.session(session.number))]).makeFloating())
    let none = Variant(adopting: DBusValue.tuple([]).makeFloating())
    func call(_ item: ItemObject, _ method: String, _ arguments: Variant) throws(DBusError) {
      guard let declared = ItemObject.declaration.methods.first(where: { $0.name == method }) else {
        throw .unknownMethod(Interfaces.item, method, path)
      }
      _ = try declared.handler(item, arguments, context)
    }
    func label(_ item: ItemObject) throws(DBusError) {
      _ = try ItemObject.declaration.properties.first { $0.name == "Label" }?.get(item)
    }
    // Routed while the item is there; its time comes before the call reads it.
    let item = try ItemObject(daemon: daemon, node: try #require(ObjectNode(path: path)))
    try call(item, "GetSecret", sessionPath)
    try label(item)
    clock.advance(by: 10)
    #expect(throws: DBusError.noObject(path)) { try call(item, "GetSecret", sessionPath) }
    #expect(throws: DBusError.noObject(path)) { try label(item) }
    #expect(throws: DBusError.noObject(path)) { try call(item, "Delete", none) }
  }

  @Test("over the bus: the expiry timer itself sends ItemDeleted for the expired item, not early")
  func timerSignalsItemDeleted() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let changes = try await instance.client().changes(in: .default)
      let stored = Date()
      let expires = Int(stored.timeIntervalSince1970) + 2
      let store = try instance.secretTool(
        ["store", "--label=token", "service", "timer", "expires-at", String(expires)], input: "token")
      #expect(store.status == 0, "\(store.stderrText)")
      // Nothing but the timer deletes it: no client call follows the store.
      let seen = try await withDeadline(seconds: 10, "ItemCreated then ItemDeleted from the expiry timer") {
        var seen: [ItemChange] = []
        for await change in changes {
          seen.append(change)
          if change.kind == .deleted { break }
        }
        return seen
      }
      let deletedAt = Date().timeIntervalSince1970
      #expect(seen.map(\.kind) == [.created, .deleted])
      #expect(seen.first?.itemPath == seen.last?.itemPath)
      #expect(seen.first?.itemPath.hasPrefix("/org/freedesktop/secrets/collection/session/") == true)
      // Never before the expiry second (how soon after is bounded by the deadline above; a
      // loaded machine may be late, which is not an error).
      #expect(deletedAt >= Double(expires) - 0.01)
    }
  }
}
