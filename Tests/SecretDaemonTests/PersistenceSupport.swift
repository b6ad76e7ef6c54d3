// Helpers of the persistence tests: a private folder removed afterwards, and files as bytes.
import SecretMemory
import SystemCalls

@testable import SecretDaemon

/// A new folder under /tmp, removed (with the files directly in it) when the body ends.
func withPersistenceFolder<R>(_ body: (String) throws -> R) throws -> R {
  let folder = try Files.makeTemporaryDirectory(in: "/tmp", prefix: "secretd-persistence-")
  defer { Files.removeDirectory(folder) }
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
