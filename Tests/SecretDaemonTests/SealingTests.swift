// Sealing one record: AES-256-GCM with the record's identity bound in, and Argon2id as
// libgcrypt computes it.
import SecretMemory
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("sealing records")
struct SealingTests {
  static let identity = RecordIdentity(collection: "login", item: 7, generation: 42)

  @Test("a sealed record opens with its key and identity to the same bytes, never in clear")
  func roundTrip() throws {
    let key = try DataKey.random()
    let secret = plaintext("correct horse battery staple")
    let sealed = try key.seal(secret, as: Self.identity)
    #expect(sealed.count == secret.count + DataKey.sealOverhead)
    #expect(!sealed.contains(subsequence: Array("correct horse".utf8)))
    let opened = try key.open(sealed, as: Self.identity)
    #expect(opened == secret)
  }

  @Test("two seals of the same record differ: a fresh nonce each time")
  func freshNonce() throws {
    let key = try DataKey.random()
    let first = try key.seal(plaintext("same"), as: Self.identity)
    let second = try key.seal(plaintext("same"), as: Self.identity)
    #expect(first.prefix(12) != second.prefix(12))
    #expect(first != second)
  }

  @Test("another key is refused")
  func wrongKey() throws {
    let sealed = try DataKey.random().seal(plaintext("secret"), as: Self.identity)
    #expect(throws: SealingError.refused) { try DataKey.random().open(sealed, as: Self.identity) }
  }

  @Test(
    "a record moved to another collection, item or generation, or read as a delete, is refused",
    arguments: [
      (RecordIdentity(collection: "session", item: 7, generation: 42), RecordKind.put),
      (RecordIdentity(collection: "login", item: 8, generation: 42), .put),
      (RecordIdentity(collection: "login", item: 7, generation: 41), .put),
      (RecordIdentity(collection: "login", item: 7, generation: 42), .delete),
    ])
  func wrongIdentity(other: RecordIdentity, kind: RecordKind) throws {
    let key = try DataKey.random()
    let sealed = try key.seal(plaintext("secret"), as: Self.identity)
    #expect(throws: SealingError.refused) { try key.open(sealed, as: other, kind: kind) }
    #expect(try key.open(sealed, as: Self.identity) == plaintext("secret"))
  }

  @Test("a flipped bit anywhere in a sealed record (nonce, ciphertext or tag) is refused")
  func flippedByte() throws {
    let key = try DataKey.random()
    let sealed = try key.seal(plaintext("a secret of some length"), as: Self.identity)
    for offset in sealed.indices {
      var damaged = sealed
      damaged[offset] ^= 0x01
      #expect(throws: SealingError.refused, "offset \(offset)") { try key.open(damaged, as: Self.identity) }
    }
  }

  @Test("bytes too short for a nonce and a tag are malformed, not opened")
  func tooShort() throws {
    #expect(throws: SealingError.malformed("27 bytes, fewer than a nonce and a tag (28)")) {
      try DataKey.random().open([UInt8](repeating: 0, count: 27), as: Self.identity)
    }
  }

  @Test("Argon2id through libgcrypt gives RFC 9106's test vector")
  func argon2idVector() throws {
    // RFC 9106 section 5.3: password 32 × 0x01, salt 16 × 0x02, secret 8 × 0x03, ad 12 × 0x04,
    // t = 3, m = 32 KiB, p = 4, tag 32 bytes.
    var output = [UInt8](repeating: 0, count: 32)
    let password = [UInt8](repeating: 1, count: 32)
    let salt = [UInt8](repeating: 2, count: 16)
    let secret = [UInt8](repeating: 3, count: 8)
    let data = [UInt8](repeating: 4, count: 12)
    try output.withMutableRawBytes { (out) throws(SealingError) in
      try password.withRawBytes { (password) throws(SealingError) in
        try salt.withRawBytes { (salt) throws(SealingError) in
          try secret.withRawBytes { (secret) throws(SealingError) in
            try data.withRawBytes { (data) throws(SealingError) in
              try SealingCalls.argon2id(
                passphrase: password, salt: salt, iterations: 3, memoryKiB: 32, parallelism: 4, secret: secret,
                associatedData: data, into: out)
            }
          }
        }
      }
    }
    let expected = "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
    #expect(output.map { String(format2: $0) }.joined() == expected)
  }
}

extension String {
  /// Two lowercase hexadecimal digits.
  init(format2 byte: UInt8) {
    let digits = Array("0123456789abcdef")
    self = String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }
}

extension Array where Element == UInt8 {
  func contains(subsequence: [UInt8]) -> Bool {
    guard subsequence.count <= count else { return false }
    return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
  }
}
