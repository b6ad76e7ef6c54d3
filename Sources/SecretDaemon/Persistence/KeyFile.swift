// The key file: the data key's identity and every unlocker that wraps it, in one small file
// replaced atomically. Records are sealed with the data key alone, so unlockers come and go
// without touching them.
//
// Layout, version 1 (integers little-endian):
//   "SECRETDK" | version u16 | unlocker count u16 | key id (16) | key check (28: nonce, tag)
//   then per unlocker: kind u16 | number u32 | body length u32 | body
//   then CRC-32C u32 of everything before it.
// The key check is an empty plaintext sealed with the data key under "secretd key check 1" and
// the key id: it tells whether a data key is this file's before an unlocker is added for it.
package import SecretMemory
package import TransferCrypto

/// The data key's identity and the unlockers that wrap it.
package struct KeyFile: Equatable, Sendable {
  package static let magic = Array("SECRETDK".utf8)
  package static let version: UInt16 = 1
  static let keyIDLength = 16

  /// Random; names the data key, and is written in the head of every record log it seals.
  package let keyID: [UInt8]
  /// The key check: sealed with the data key, opened to know a key is this file's.
  let keyCheck: [UInt8]
  /// Every unlocker, in the order added; never empty in a file this code writes.
  package private(set) var unlockers: [Unlocker]

  init(keyID: [UInt8], keyCheck: [UInt8], unlockers: [Unlocker]) {
    (self.keyID, self.keyCheck, self.unlockers) = (keyID, keyCheck, unlockers)
  }

  /// A new key file for `dataKey`, with a passphrase unlocker as its first.
  package static func create(
    for dataKey: DataKey, passphrase: SecretBytes, parameters: Argon2Parameters = .standard()
  ) throws(KeyFileError) -> KeyFile {
    var keyID = [UInt8](repeating: 0, count: keyIDLength)
    keyID.withUnsafeMutableBytes { SealingCalls.randomize($0) }
    let check: [UInt8]
    do { check = try dataKey.seal(SecretBytes(count: 0), associatedData: keyCheckData(keyID)) } catch {
      throw .sealing(error)
    }
    var file = KeyFile(keyID: keyID, keyCheck: check, unlockers: [])
    try file.addPassphrase(passphrase, for: dataKey, parameters: parameters)
    return file
  }

  /// Whether `dataKey` is the key this file wraps (its key check opens).
  package func isKey(_ dataKey: DataKey) -> Bool {
    (try? dataKey.open(keyCheck, associatedData: Self.keyCheckData(keyID))) != nil
  }

  /// Adds `unlocker` (made for this file's data key).
  mutating func add(_ unlocker: Unlocker) { unlockers.append(unlocker) }

  /// The number a new unlocker gets: one more than the largest.
  var nextUnlockerNumber: UInt32 { (unlockers.map(\.number).max() ?? 0) + 1 }

  /// Removes unlocker `number`; refuses to remove the last one, which would lose the data key.
  package mutating func removeUnlocker(number: UInt32) throws(KeyFileError) {
    guard let index = unlockers.firstIndex(where: { $0.number == number }) else {
      throw .noSuchUnlocker(number: number)
    }
    guard unlockers.count > 1 else { throw .lastUnlocker }
    unlockers.remove(at: index)
  }

  static func keyCheckData(_ keyID: [UInt8]) -> [UInt8] { Array("secretd key check 1".utf8) + keyID }

  /// The associated data an unlocker wraps the data key under: the key id, the unlocker's kind
  /// and number and its parameters (the body before the wrapped key), so none can be changed.
  func wrapData(kind: UnlockerKind, number: UInt32, parameters: some Collection<UInt8>) -> [UInt8] {
    var writer = LittleEndianWriter()
    writer.write(Array("secretd key wrap 1".utf8))
    writer.write(keyID)
    writer.write(kind.rawValue)
    writer.write(number)
    writer.write(parameters)
    return writer.bytes
  }
}

extension KeyFile {
  /// The file's bytes.
  package func encoded() -> [UInt8] {
    var writer = LittleEndianWriter()
    writer.write(Self.magic)
    writer.write(Self.version)
    writer.write(UInt16(unlockers.count))
    writer.write(keyID)
    writer.write(keyCheck)
    for unlocker in unlockers {
      writer.write(unlocker.kind.rawValue)
      writer.write(unlocker.number)
      writer.write(UInt32(unlocker.body.count))
      writer.write(unlocker.body)
    }
    writer.write(CRC32C.checksum(writer.bytes))
    return writer.bytes
  }

  /// Reads a key file's bytes whole, or refuses them; `path` is for messages.
  package init(decoding bytes: [UInt8], path: String = "key file") throws(KeyFileError) {
    func malformed(_ reason: String) -> KeyFileError { .malformed(path: path, reason: reason) }
    guard bytes.count >= 4, bytes.starts(with: Self.magic) else { throw malformed("no SECRETDK header") }
    var reader = LittleEndianReader(bytes[...])
    _ = reader.read(count: Self.magic.count)
    guard let version = reader.read(UInt16.self) else { throw malformed("cut short") }
    guard version == Self.version else { throw .unsupportedVersion(path: path, version: version) }
    let stored = bytes.suffix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << ($1.offset * 8) }
    guard CRC32C.checksum(bytes.dropLast(4)) == stored else { throw malformed("checksum mismatch") }
    reader = LittleEndianReader(bytes.dropLast(4))
    _ = reader.read(count: Self.magic.count + 2)
    guard let count = reader.read(UInt16.self), let keyID = reader.read(count: Self.keyIDLength),
      let check = reader.read(count: DataKey.sealOverhead)
    else { throw malformed("cut short") }
    var unlockers: [Unlocker] = []
    for _ in 0..<count {
      guard let kind = reader.read(UInt16.self), let number = reader.read(UInt32.self),
        let length = reader.read(UInt32.self), let body = reader.read(count: Int(length))
      else { throw malformed("unlocker \(unlockers.count + 1) cut short") }
      guard !unlockers.contains(where: { $0.number == number }) else { throw malformed("unlocker \(number) twice") }
      unlockers.append(Unlocker(kind: UnlockerKind(rawValue: kind), number: number, body: Array(body)))
    }
    guard reader.isAtEnd else { throw malformed("\(reader.remaining) bytes after the unlockers") }
    guard !unlockers.isEmpty else { throw malformed("no unlocker") }
    self.init(keyID: Array(keyID), keyCheck: Array(check), unlockers: unlockers)
  }
}
