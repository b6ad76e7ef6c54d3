// The key file: a passphrase unlocker wraps the data key; unlockers come and go without
// touching the sealed records; a wrong passphrase changes nothing.
import SecretMemory
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("key file")
struct KeyFileTests {
  static let slot = RecordSlot(collection: "login", item: 1)

  @Test("a saved key file unlocks with its passphrase to the key that sealed the records")
  func unlocks() throws {
    try withPersistenceFolder { folder in
      let key = try DataKey.random()
      try KeyFile.create(for: key, passphrase: plaintext("first"), parameters: .fastForTests()).save(
        to: folder + "/keys")
      let log = try RecordLog.create(at: folder + "/login.log", keyID: [UInt8](repeating: 1, count: 16))
      try log.put(plaintext("kept"), in: Self.slot, key: key)
      let loaded = try #require(try KeyFile.load(from: folder + "/keys"))
      let unlocked = try loaded.unlock(passphrase: plaintext("first"))
      #expect(unlocked.bytes == key.bytes)
      #expect(try unsealedTexts(log, key: unlocked) == [1: "kept"])
    }
  }

  @Test("a wrong passphrase is refused, and the file and the right passphrase are as before")
  func wrongPassphrase() throws {
    try withPersistenceFolder { folder in
      let key = try DataKey.random()
      let path = folder + "/keys"
      try KeyFile.create(for: key, passphrase: plaintext("right"), parameters: .fastForTests()).save(to: path)
      let before = try fileBytes(path)
      let file = try #require(try KeyFile.load(from: path))
      #expect(throws: KeyFileError.wrongPassphrase) { try file.unlock(passphrase: plaintext("wrong")) }
      #expect(throws: KeyFileError.wrongPassphrase) { try file.unlock(passphrase: plaintext("righ")) }
      #expect(try fileBytes(path) == before)
      #expect(try file.unlock(passphrase: plaintext("right")).bytes == key.bytes)
    }
  }

  @Test("adding a second passphrase and removing the first keeps every record, none sealed again")
  func swapUnlockers() throws {
    try withPersistenceFolder { folder in
      let key = try DataKey.random()
      let keys = folder + "/keys"
      var file = try KeyFile.create(for: key, passphrase: plaintext("old"), parameters: .fastForTests())
      try file.save(to: keys)
      let log = try RecordLog.create(at: folder + "/login.log", keyID: file.keyID)
      for item in 1...3 {
        try log.put(plaintext("secret \(item)"), in: RecordSlot(collection: "login", item: UInt64(item)), key: key)
      }
      let records = try fileBytes(folder + "/login.log")

      let unlocked = try file.unlock(passphrase: plaintext("old"))
      let added = try file.addPassphrase(plaintext("new"), for: unlocked, parameters: .fastForTests())
      try file.save(to: keys)
      let first = try #require(file.unlockers.first?.number)
      try file.removeUnlocker(number: first)
      try file.save(to: keys)

      let reloaded = try #require(try KeyFile.load(from: keys))
      #expect(reloaded.unlockers.map(\.number) == [added])
      #expect(reloaded.keyID == file.keyID)
      #expect(throws: KeyFileError.wrongPassphrase) { try reloaded.unlock(passphrase: plaintext("old")) }
      let newKey = try reloaded.unlock(passphrase: plaintext("new"))
      #expect(try fileBytes(folder + "/login.log") == records)
      #expect(try unsealedTexts(log, key: newKey) == [1: "secret 1", 2: "secret 2", 3: "secret 3"])
    }
  }

  @Test("the last unlocker cannot be removed, and an unknown number is named")
  func lastUnlocker() throws {
    var file = try KeyFile.create(for: try DataKey.random(), passphrase: plaintext("only"), parameters: .fastForTests())
    let only = try #require(file.unlockers.first?.number)
    #expect(throws: KeyFileError.noSuchUnlocker(number: only + 1)) { try file.removeUnlocker(number: only + 1) }
    #expect(throws: KeyFileError.lastUnlocker) { try file.removeUnlocker(number: only) }
    #expect(file.unlockers.count == 1)
  }

  @Test("an unlocker cannot be added for another data key")
  func wrongDataKey() throws {
    var file = try KeyFile.create(for: try DataKey.random(), passphrase: plaintext("a"), parameters: .fastForTests())
    #expect(throws: KeyFileError.wrongDataKey) {
      try file.addPassphrase(plaintext("b"), for: try DataKey.random(), parameters: .fastForTests())
    }
    #expect(file.unlockers.count == 1)
  }

  @Test("an unlocker of a kind this code does not know is kept, byte for byte, through a rewrite")
  func unknownKindKept() throws {
    let key = try DataKey.random()
    var file = try KeyFile.create(for: key, passphrase: plaintext("p"), parameters: .fastForTests())
    file.add(Unlocker(kind: .tpm2, number: 9, body: [1, 2, 3, 4]))
    let decoded = try KeyFile(decoding: file.encoded())
    #expect(decoded.unlockers.last == Unlocker(kind: .tpm2, number: 9, body: [1, 2, 3, 4]))
    #expect(try decoded.unlock(passphrase: plaintext("p")).bytes == key.bytes)
    #expect(decoded.encoded() == file.encoded())
  }

  @Test(
    "a login unlocker opens with the login password, and its kind is bound: relabelled a passphrase it opens nothing")
  func loginUnlockerKindIsBound() throws {
    let key = try DataKey.random()
    var file = try KeyFile.create(for: key, passphrase: plaintext("passphrase"), parameters: .fastForTests())
    let number = try file.addPassphrase(
      plaintext("login password"), kind: .login, for: key, parameters: .fastForTests())
    let login = try #require(file.unlockers.last)
    #expect(login.kind == .login && login.number == number)
    #expect(try file.unlock(passphrase: plaintext("login password")).bytes == key.bytes)
    let relabelled = KeyFile(
      keyID: file.keyID, keyCheck: file.keyCheck,
      unlockers: [Unlocker(kind: .passphrase, number: login.number, body: login.body)])
    #expect(throws: KeyFileError.wrongPassphrase) { try relabelled.unlock(passphrase: plaintext("login password")) }
    #expect(throws: KeyFileError.noUnlocker(.tpm2)) {
      try file.addPassphrase(plaintext("x"), kind: .tpm2, for: key, parameters: .fastForTests())
    }
  }

  @Test("Argon2id costs changed in the file make the passphrase fail, and the original costs open it")
  func parametersAreBound() throws {
    let file = try KeyFile.create(for: try DataKey.random(), passphrase: plaintext("p"), parameters: .fastForTests())
    let original = file.unlockers[0]
    var unlocker = try #require(PassphraseUnlocker(body: original.body))
    unlocker.parameters.memoryKiB = 128
    let changed = KeyFile(
      keyID: file.keyID, keyCheck: file.keyCheck,
      unlockers: [Unlocker(kind: .passphrase, number: original.number, body: unlocker.body)])
    #expect(throws: KeyFileError.wrongPassphrase) { try changed.unlock(passphrase: plaintext("p")) }
    _ = try file.unlock(passphrase: plaintext("p"))
  }

  @Test("the default cost is RFC 9106's memory-constrained choice: 3 passes over 64 MiB, 4 lanes")
  func standardCost() {
    let standard = Argon2Parameters.standard()
    #expect((standard.iterations, standard.memoryKiB, standard.parallelism) == (3, 65536, 4))
    #expect(standard.salt.count == 32 && standard.salt != Argon2Parameters.standard().salt)
  }
}
