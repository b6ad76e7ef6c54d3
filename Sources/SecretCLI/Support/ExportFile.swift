// The file `secretctl export` writes and `secretctl import` reads: a collection's items, sealed
// whole to a passphrase, so that it can be carried to another machine or kept as a backup.
//
// Layout, version 1 (integers little-endian):
//   "secretctl-export" | version u16 | Argon2id: iterations u32 | memory KiB u32 | parallelism u32
//   | salt length u8 | salt
//   then AES-256-GCM of the items under the key Argon2id derives from the passphrase, with
//   everything before it as associated data: nonce (12) | ciphertext | tag (16).
// The items, once opened: count u32, then per item its label, content type, attribute count u32
// and each attribute's name and value, then its secret; every string and the secret as a u32
// length and its bytes. Only the header is readable without the passphrase.
import SecretClient
import TransferCrypto

/// One item as an export file holds it.
struct ExportedItem {
  var label: String
  var attributes: [String: String]
  var value: SecretValue
}

/// Why an export file could not be read.
enum ExportFileError: Error, Equatable, CustomStringConvertible {
  case notAnExport
  case newerVersion(UInt16)
  case refused
  case malformed(String)
  case sealing(SealingError)

  var description: String {
    switch self {
    case .notAnExport: "not a file secretctl export wrote"
    case .newerVersion(let version): "an export of version \(version), newer than this secretctl reads (1)"
    case .refused: "wrong passphrase, or the file was changed since it was written"
    case .malformed(let reason): "a damaged export file (\(reason))"
    case .sealing(let error): "\(error)"
    }
  }
}

enum ExportFile {
  static let magic = Array("secretctl-export".utf8)
  static let version: UInt16 = 1

  /// The file's bytes: `items` sealed to `passphrase` at Argon2id's standard cost (or
  /// `parameters`).
  static func seal(
    _ items: [ExportedItem], passphrase: SecretBytes, parameters: Argon2Parameters = .standard()
  ) throws(SealingError) -> [UInt8] {
    let header = self.header(parameters)
    let key = try DataKey.derived(from: passphrase, parameters)
    return header + (try key.seal(payload(items), associatedData: header))
  }

  /// The items of an export file's `bytes`, opened with `passphrase`.
  static func open(_ bytes: [UInt8], passphrase: SecretBytes) throws(ExportFileError) -> [ExportedItem] {
    var reader = ByteReader(bytes[...])
    guard reader.bytes(magic.count).map(Array.init) == magic else { throw .notAnExport }
    guard let version = reader.integer(UInt16.self) else { throw .malformed("no version") }
    guard version == Self.version else { throw .newerVersion(version) }
    guard let iterations = reader.integer(UInt32.self), let memory = reader.integer(UInt32.self),
      let parallelism = reader.integer(UInt32.self), let saltLength = reader.integer(UInt8.self),
      let salt = reader.bytes(Int(saltLength))
    else { throw .malformed("the header ends early") }
    let parameters = Argon2Parameters(
      iterations: iterations, memoryKiB: memory, parallelism: parallelism, salt: Array(salt))
    // Checked before any work: a file from someone else must not make this process spend
    // gigabytes or minutes (export writes 64 MiB, 3 passes).
    guard parameters.isPlausible, parameters.memoryKiB <= 1024 * 1024, parameters.iterations <= 16 else {
      throw .malformed("Argon2id costs beyond what an export uses")
    }
    let opened: SecretBytes
    do throws(SealingError) {
      let key = try DataKey.derived(from: passphrase, parameters)
      opened = try key.open(reader.rest, associatedData: Array(bytes[..<reader.offset]))
    } catch .refused {
      throw .refused
    } catch {
      throw .sealing(error)
    }
    return try items(in: opened)
  }

  private static func header(_ parameters: Argon2Parameters) -> [UInt8] {
    var header = magic
    header.appendLittleEndian(version)
    header.appendLittleEndian(parameters.iterations)
    header.appendLittleEndian(parameters.memoryKiB)
    header.appendLittleEndian(parameters.parallelism)
    header.append(UInt8(parameters.salt.count))
    return header + parameters.salt
  }

  /// The items, written into locked memory: secrets are never copied elsewhere.
  private static func payload(_ items: [ExportedItem]) -> SecretBytes {
    let payload = SecretBytes()
    func append(_ bytes: some Collection<UInt8>) {
      payload.append(contentsOf: UInt32(bytes.count).littleEndianBytes)
      payload.append(contentsOf: bytes)
    }
    payload.append(contentsOf: UInt32(items.count).littleEndianBytes)
    for item in items {
      append(item.label.utf8)
      append(item.value.contentType.utf8)
      payload.append(contentsOf: UInt32(item.attributes.count).littleEndianBytes)
      for (name, value) in item.attributes.sorted(by: { $0.key < $1.key }) {
        append(name.utf8)
        append(value.utf8)
      }
      append(item.value.bytes)
    }
    return payload
  }

  private static func items(in payload: SecretBytes) throws(ExportFileError) -> [ExportedItem] {
    var reader = ByteReader(payload[...])
    func text() throws(ExportFileError) -> String {
      guard let length = reader.integer(UInt32.self), let bytes = reader.bytes(Int(length)),
        let text = String(validating: bytes, as: UTF8.self)
      else { throw .malformed("an item's text ends early or is not UTF-8") }
      return text
    }
    guard let count = reader.integer(UInt32.self) else { throw .malformed("no item count") }
    var items: [ExportedItem] = []
    for _ in 0..<count {
      let label = try text()
      let contentType = try text()
      guard let attributeCount = reader.integer(UInt32.self) else { throw .malformed("no attribute count") }
      var attributes: [String: String] = [:]
      for _ in 0..<attributeCount { attributes[try text()] = try text() }
      guard let length = reader.integer(UInt32.self), let secret = reader.bytes(Int(length)) else {
        throw .malformed("a secret ends early")
      }
      let value = SecretValue(bytes: SecretBytes(copying: secret), contentType: contentType)
      items.append(ExportedItem(label: label, attributes: attributes, value: value))
    }
    guard reader.rest.isEmpty else { throw .malformed("bytes after the last item") }
    return items
  }
}

/// Reads integers and runs of bytes off the front of a collection of bytes, in place.
private struct ByteReader<Bytes: Collection<UInt8>> where Bytes.SubSequence == Bytes, Bytes.Index == Int {
  private var remaining: Bytes
  init(_ bytes: Bytes) { remaining = bytes }

  var offset: Int { remaining.startIndex }
  var rest: Bytes { remaining }

  mutating func bytes(_ count: Int) -> Bytes? {
    guard count >= 0, remaining.count >= count else { return nil }
    defer { remaining = remaining.dropFirst(count) }
    return remaining.prefix(count)
  }

  mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
    guard let bytes = bytes(MemoryLayout<T>.size) else { return nil }
    return bytes.reversed().reduce(T.zero) { ($0 << 8) | T($1) }
  }
}

extension FixedWidthInteger {
  fileprivate var littleEndianBytes: [UInt8] {
    (0..<MemoryLayout<Self>.size).map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
  }
}

extension [UInt8] {
  fileprivate mutating func appendLittleEndian(_ value: some FixedWidthInteger) {
    append(contentsOf: value.littleEndianBytes)
  }
}
