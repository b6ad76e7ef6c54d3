// The persistent collection's backing in this process: Lock wipes the decrypted items from the
// arena, a write the log refuses changes nothing, and wrong passphrases make the next attempt wait.
import SecretMemory
import SystemCalls
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("the sealed collection's backing")
struct SealedCollectionTests {
  /// A store with `login` sealed in `folder`, unlocked with `passphrase` (cheap Argon2id).
  static func unlockedStore(in folder: String, passphrase: String = "passphrase") throws -> (Store, SealedCollection) {
    let store = try makeStore()
    let sealed = try SealedCollection.attach(folder: folder + "/secretd", to: store, parameters: .fastForTests())
    _ = try sealed.unlock(passphrase: SecretBytes(passphrase), store: store, storeLock: ReadWriteLock())
    return (store, sealed)
  }

  static func arenaHolds(_ token: String, _ store: Store) -> Bool {
    let needle = Array(token.utf8)
    let bytes = UnsafeRawBufferPointer(start: store.arena.memory.base, count: store.arena.memory.size)
    guard bytes.count >= needle.count else { return false }
    for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
      if needle.indices.allSatisfy({ bytes[start + $0] == needle[$0] }) { return true }
    }
    return false
  }

  @Test("Lock removes the decrypted item from the arena; the next unlock brings it back")
  func lockWipesTheArena() throws {
    try withPersistenceFolder { folder in
      let (store, sealed) = try Self.unlockedStore(in: folder)
      let token = randomToken()
      let (number, _) = try store.createItem(
        in: "login", label: "l", attributes: ["service": "w"], contentType: "text/plain", secret: sent(token),
        replace: false)
      #expect(Self.arenaHolds(token, store))

      try store.setLocked("login", true)
      #expect(!Self.arenaHolds(token, store))
      #expect(store.collections["login"]?.items.isEmpty == true)
      #expect(throws: StoreError.self) { try store.unlockedItem(ItemReference(collection: "login", item: number)) }

      _ = try sealed.unlock(passphrase: SecretBytes("passphrase"), store: store, storeLock: ReadWriteLock())
      let item = try store.unlockedItem(ItemReference(collection: "login", item: number))
      #expect(Array(store.secret(of: item)) == Array(token.utf8))
    }
  }

  @Test("a write the log refuses fails and leaves the store and the log as they were")
  func refusedWriteChangesNothing() throws {
    try withPersistenceFolder { folder in
      let (store, sealed) = try Self.unlockedStore(in: folder)
      let (number, _) = try store.createItem(
        in: "login", label: "l", attributes: ["service": "r"], contentType: "text/plain", secret: sent("old"),
        replace: false)
      let log = try #require(sealed.log)
      let (used, size) = (store.usedBytes, log.size)
      log.failure = "a test's broken disk"

      #expect(throws: StoreError.self) {
        try store.createItem(
          in: "login", label: "l", attributes: ["service": "r"], contentType: "text/plain", secret: sent("new"),
          replace: true)
      }
      #expect(throws: StoreError.self) {
        try store.createItem(
          in: "login", label: "n", attributes: ["service": "n"], contentType: "text/plain", secret: sent("other"),
          replace: false)
      }
      #expect(throws: StoreError.self) { try store.deleteItem(ItemReference(collection: "login", item: number)) }
      let item = try store.unlockedItem(ItemReference(collection: "login", item: number))
      #expect(Array(store.secret(of: item)) == Array("old".utf8))
      #expect(store.collections["login"]?.items.count == 1)
      #expect(store.usedBytes == used)
      #expect(log.size == size)
    }
  }

  @Test("after a wrong passphrase the next attempt waits, longer after each failure")
  func failuresMakeTheNextAttemptWait() throws {
    #expect(SealedCollection.delay(afterFailures: 1) == .seconds(1))
    #expect(SealedCollection.delay(afterFailures: 2) == .seconds(2))
    #expect(SealedCollection.delay(afterFailures: 40) == .seconds(30))
    try withPersistenceFolder { folder in
      let (store, sealed) = try Self.unlockedStore(in: folder)
      try store.setLocked("login", true)
      let lock = ReadWriteLock()
      #expect(throws: UnlockError.wrongPassphrase) {
        try sealed.unlock(passphrase: SecretBytes("wrong"), store: store, storeLock: lock)
      }
      let clock = ContinuousClock()
      let waited = clock.measure {
        _ = try? sealed.unlock(passphrase: SecretBytes("passphrase"), store: store, storeLock: lock)
      }
      #expect(waited >= .milliseconds(900))
      #expect(store.collections["login"]?.locked == false)
    }
  }
}
