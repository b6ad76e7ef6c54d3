import SecretMemory
import Testing
import TransferCrypto

// Transfer crypto: HKDF vector, DH agreement, AES-CBC-PKCS7 and its failure modes.
@testable import SecretDaemon

@Suite("crypto")
struct CryptoTests {
  @Test("HKDF-SHA256 with empty salt and info matches RFC 5869 test case 3")
  func hkdfVector() throws {
    let inputKeyMaterial = [UInt8](repeating: 0x0b, count: 22)
    var key = [UInt8](repeating: 0, count: 16)
    try inputKeyMaterial.withUnsafeBytes { ikm in
      try key.withUnsafeMutableBytes { try DiffieHellman.hkdfSHA256(inputKeyMaterial: ikm, into: $0) }
    }
    let expected: [UInt8] = [
      0x8d, 0xa4, 0xe7, 0x75, 0xa5, 0x63, 0xc1, 0x8f, 0x71, 0x5f, 0x80, 0x2a, 0x06, 0x3c, 0x5a, 0x31,
    ]
    #expect(key == expected)
  }

  @Test("both sides of the DH exchange derive the same key")
  func agreement() throws {
    let client = try DiffieHellman.makeKeyPair()
    let server = try client.publicKey.withUnsafeBytes { try KeyAgreement.respond(toClientKey: $0) }
    let clientKey = try server.serverPublicKey.withUnsafeBytes { try KeyAgreement.deriveKey(client, peerKey: $0) }
    #expect(clientKey == server.aesKey)
    #expect(server.serverPublicKey.count == 128)
  }

  @Test("every agreement gets a server key pair of its own, whether made ahead or during the call")
  func serverKeyPairsAreNeverShared() throws {
    let client = try DiffieHellman.makeKeyPair()
    var serverKeys: Set<[UInt8]> = []
    for _ in 0..<20 {
      let server = try client.publicKey.withUnsafeBytes { try KeyAgreement.respond(toClientKey: $0) }
      serverKeys.insert(server.serverPublicKey)
    }
    #expect(serverKeys.count == 20)
  }

  @Test("a public key with leading zero bytes (a signed encoding, 129 bytes) is the same key")
  func leadingZerosAreIgnored() throws {
    let client = try DiffieHellman.makeKeyPair()
    let server = try ([0] + client.publicKey).withUnsafeBytes { try KeyAgreement.respond(toClientKey: $0) }
    let clientKey = try server.serverPublicKey.withUnsafeBytes { try KeyAgreement.deriveKey(client, peerKey: $0) }
    #expect(clientKey == server.aesKey)
  }

  @Test("AES-128-CBC-PKCS7 round trips every length, with a fresh IV each time")
  func roundTrip() throws {
    let key = try secretBytes(Array(repeating: 9, count: 16))
    for length in [0, 1, 15, 16, 17, 100] {
      let secret = (0..<length).map { UInt8($0 & 0xff) }
      let sealed = try secret.withUnsafeBytes { try TransferCipher.encrypt($0, key: key) }
      #expect(sealed.ciphertext.count == (length / 16 + 1) * 16)
      var opened = [UInt8](repeating: 0, count: sealed.ciphertext.count)
      let count = try sealed.ciphertext.withUnsafeBytes { c in
        try sealed.iv.withUnsafeBytes { i in
          try opened.withUnsafeMutableBytes { try TransferCipher.decrypt(c, iv: i, key: key, into: $0) }
        }
      }
      #expect(Array(opened[0..<count]) == secret)
    }
    let a = try [UInt8(1)].withUnsafeBytes { try TransferCipher.encrypt($0, key: key) }
    let b = try [UInt8(1)].withUnsafeBytes { try TransferCipher.encrypt($0, key: key) }
    #expect(a.iv != b.iv)
  }

  @Test("wrong IV length, bad ciphertext length and bad padding are errors")
  func failures() throws {
    let key = try secretBytes(Array(repeating: 9, count: 16))
    let iv = [UInt8](repeating: 0, count: 16)
    func decrypt(_ data: [UInt8], iv: [UInt8]) throws(CryptoError) -> Int {
      var output = [UInt8](repeating: 0, count: data.count)
      let result: Result<Int, CryptoError> = data.withUnsafeBytes { d in
        iv.withUnsafeBytes { i in
          output.withUnsafeMutableBytes { o in
            do throws(CryptoError) { return .success(try TransferCipher.decrypt(d, iv: i, key: key, into: o)) } catch {
              return .failure(error)
            }
          }
        }
      }
      return try result.get()
    }
    #expect(throws: CryptoError.invalidIVLength(8)) {
      try decrypt(Array(repeating: 0, count: 16), iv: Array(repeating: 0, count: 8))
    }
    #expect(throws: CryptoError.invalidCiphertextLength(0)) { try decrypt([], iv: iv) }
    #expect(throws: CryptoError.invalidCiphertextLength(17)) { try decrypt(Array(repeating: 0, count: 17), iv: iv) }
    var zeros = [UInt8](repeating: 0, count: 16)
    try key.withUnsafeBytes { k in
      try iv.withUnsafeBytes { i in
        try zeros.withUnsafeMutableBytes { try AES128CBC.run(encrypt: true, key: k, iv: i, data: $0) }
      }
    }
    #expect(throws: CryptoError.invalidPadding) { try decrypt(zeros, iv: iv) }
  }

  @Test("public keys outside 2...p-2 are refused")
  func invalidKeys() throws {
    let padded = [UInt8](repeating: 0, count: 1 << 20) + [2]  // a valid key behind a megabyte of zeros
    for key: [UInt8] in [[], [0], [1], Array(repeating: 0xff, count: 128), Array(repeating: 1, count: 129), padded] {
      #expect(throws: CryptoError.self) { try key.withUnsafeBytes { try KeyAgreement.respond(toClientKey: $0) } }
    }
  }
}
