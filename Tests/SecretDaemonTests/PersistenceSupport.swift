// Helpers of the persistence tests: a private folder removed afterwards, files as bytes, a key
// file with cheap Argon2id costs, and `login` reopened as a restarted secretd opens it.
import Foundation
import SecretMemory
import SystemCalls
import Testing
import TransferCrypto

@testable import SecretDaemon

/// A new folder under /tmp, removed with all it holds when the body ends.
func withPersistenceFolder<R>(_ body: (String) throws -> R) throws -> R {
  let folder = try Files.makeTemporaryDirectory(in: "/tmp", prefix: "secretd-persistence-")
  defer { try? FileManager.default.removeItem(atPath: folder) }
  return try body(folder)
}

func fileBytes(_ path: String) throws -> [UInt8] {
  guard let bytes = try Files.read(path) else { throw FileCallError(call: "open", path: path, errno: .noSuchFile) }
  return bytes
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
  try Files.replace(path, with: bytes, permissions: .ownerReadWrite)
}

func plaintext(_ text: String) -> SecretBytes { SecretBytes(text) }

/// Each live item's plaintext as text, by item number.
func unsealedTexts(_ log: RecordLog, key: DataKey) throws -> [UInt64: String] {
  var texts: [UInt64: String] = [:]
  for (slot, bytes) in try log.unseal(with: key) { texts[slot.item] = String(decoding: Array(bytes), as: UTF8.self) }
  return texts
}

/// Makes `folder` (private) with a key file for `passphrase` at Argon2id's least costs, before
/// any secretd made one: a key file keeps its costs beside the wrapped key, so every unlock of
/// a secretd serving `folder` is then cheap. Returns the data key.
@discardableResult
func seedCheapKeyFile(in folder: String, passphrase: String) throws -> DataKey {
  try Files.makeDirectories(Files.split(folder).directory)
  try Files.makePrivateDirectory(folder)
  let key = try DataKey.random()
  try KeyFile.create(for: key, passphrase: plaintext(passphrase), parameters: .fastForTests()).save(
    to: folder + "/login.key")
  return key
}

/// `login` as a restarted secretd serves it from the sealed files in `folder`: a new store,
/// `login` attached and unlocked with `passphrase`.
func reopenedLogin(in folder: String, passphrase: String) throws -> (Store, SealedCollection) {
  let store = try makeStore(limits: Limits(maxMemory: 4 << 20))
  let sealed = try SealedCollection.attach(folder: folder, to: store, parameters: .fastForTests())
  _ = try sealed.unlock(passphrase: plaintext(passphrase), store: store, storeLock: ReadWriteLock())
  return (store, sealed)
}

/// Each item of `login` in `store`: its secret by its attributes.
func loginItems(_ store: Store) throws -> [[String: String]: [UInt8]] {
  var items: [[String: String]: [UInt8]] = [:]
  for (number, item) in try #require(store.collections[SealedCollection.name]).items {
    let unlocked = try store.unlockedItem(ItemReference(collection: SealedCollection.name, item: number))
    #expect(items[item.attributes] == nil, "two items with attributes \(item.attributes)")
    items[item.attributes] = Array(store.secret(of: unlocked))
  }
  return items
}

/// The names of the files in `folder` that start with `prefix`.
func files(in folder: String, startingWith prefix: String) throws -> [String] {
  try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(prefix) }.sorted()
}
