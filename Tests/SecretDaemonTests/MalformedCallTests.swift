// Every malformed call answers with an error, and the daemon stays up with its data.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("malformed calls")
struct MalformedCallTests {
  let service = "/org/freedesktop/secrets"
  let collection = "/org/freedesktop/secrets/aliases/default"

  @Test("each gets an error by name; the daemon keeps running and keeps its data")
  func malformed() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let client = try RawClient(address: instance.busAddress)
      let other = try RawClient(address: instance.busAddress)
      let plain = try client.openPlainSession()
      let kept = try client.createPlainItem(session: plain, attributes: ["keep": "me"], secret: Array("kept".utf8))
      let (dhPath, dhKey) = try client.openDHSession()
      let foreign = try other.openPlainSession()

      func expectError(
        _ expected: String, _ path: String, _ interface: String, _ method: String, _ arguments: DBusValue,
        sourceLocation: SourceLocation = #_sourceLocation
      ) {
        let name = client.errorName(path, interface, method, arguments)
        #expect(name == expected, "\(method) on \(path)", sourceLocation: sourceLocation)
      }
      let service = Interfaces.service
      let item = Interfaces.item
      func secret(_ session: String, _ parameters: [UInt8], _ value: [UInt8]) -> DBusValue {
        .tuple([.objectPath(session), .bytes(parameters), .bytes(value), .string("text/plain")])
      }
      func create(_ secretValue: DBusValue, attributes: [String: String] = ["a": "b"]) -> DBusValue {
        .tuple([RawClient.itemProperties(label: "x", attributes: attributes), secretValue, .boolean(true)])
      }
      let invalid = "org.freedesktop.DBus.Error.InvalidArgs"
      let noSession = "org.freedesktop.Secret.Error.NoSession"
      let noObject = "org.freedesktop.Secret.Error.NoSuchObject"
      // A call to a path where no object is: GDBus's (and so gnome-keyring's) answer.
      let noObjectAtPath = "org.freedesktop.DBus.Error.UnknownMethod"
      let limits = "org.freedesktop.DBus.Error.LimitsExceeded"

      // Wrong signatures.
      expectError(invalid, self.service, service, "OpenSession", .tuple([.uint32(1)]))
      expectError(invalid, self.service, service, "SearchItems", .tuple([.string("x")]))
      expectError(invalid, collection, Interfaces.collection, "CreateItem", .tuple([]))
      // Unknown algorithm, bad DH keys.
      expectError(
        "org.freedesktop.DBus.Error.NotSupported", self.service, service, "OpenSession",
        .tuple([.string("rot13"), .variant(.string(""))]))
      let dh = TransferSession.Algorithm.dh.rawValue
      expectError(invalid, self.service, service, "OpenSession", .tuple([.string(dh), .variant(.bytes([]))]))
      expectError(invalid, self.service, service, "OpenSession", .tuple([.string(dh), .variant(.bytes([1]))]))
      expectError(
        invalid, self.service, service, "OpenSession",
        .tuple([.string(dh), .variant(.bytes(Array(repeating: 0xFF, count: 129)))]))
      expectError(
        invalid, self.service, service, "OpenSession",
        .tuple([.string(dh), .variant(.bytes(Array(repeating: 0xFF, count: 128)))]))
      expectError(invalid, self.service, service, "OpenSession", .tuple([.string(dh), .variant(.string("key"))]))
      // Unknown and foreign sessions.
      expectError(
        noSession, self.service, service, "GetSecrets",
        .tuple([.objectPaths([kept]), .objectPath("/org/freedesktop/secrets/session/s999")]))
      expectError(noSession, self.service, service, "GetSecrets", .tuple([.objectPaths([kept]), .objectPath(foreign)]))
      expectError(noSession, kept, item, "GetSecret", .tuple([.objectPath(foreign)]))
      expectError(noSession, kept, item, "GetSecret", .tuple([.objectPath("/")]))
      expectError(noSession, collection, Interfaces.collection, "CreateItem", create(secret(foreign, [], [1])))
      expectError(noSession, foreign, Interfaces.session, "Close", .tuple([]))
      // Bad encryption: IV length, ciphertext length, padding.
      let iv = [UInt8](repeating: 7, count: 16)
      expectError(
        invalid, collection, Interfaces.collection, "CreateItem",
        create(secret(dhPath, [1, 2, 3], Array(repeating: 0, count: 16))))
      expectError(
        invalid, collection, Interfaces.collection, "CreateItem",
        create(secret(dhPath, iv, Array(repeating: 0, count: 15))))
      expectError(invalid, collection, Interfaces.collection, "CreateItem", create(secret(dhPath, iv, [])))
      var badPadding = [UInt8](repeating: 0, count: 32)  // plaintext ends in 0x00: never valid PKCS#7
      try dhKey.withUnsafeBytes { key in
        try iv.withUnsafeBytes { ivBytes in
          try badPadding.withUnsafeMutableBytes { try AES128CBC.run(encrypt: true, key: key, iv: ivBytes, data: $0) }
        }
      }
      expectError(invalid, collection, Interfaces.collection, "CreateItem", create(secret(dhPath, iv, badPadding)))
      // Bounds.
      expectError(
        limits, collection, Interfaces.collection, "CreateItem",
        create(secret(plain, [], [1]), attributes: ["big": String(repeating: "x", count: 5000)]))
      expectError(
        limits, collection, Interfaces.collection, "CreateItem",
        create(secret(plain, [], [1]), attributes: Dictionary(uniqueKeysWithValues: (0..<65).map { ("k\($0)", "v") })))
      expectError(
        limits, collection, Interfaces.collection, "CreateItem",
        create(secret(plain, [], Array(repeating: 1, count: (1 << 20) + 1))))
      // Wrongly typed properties.
      expectError(
        invalid, collection, Interfaces.collection, "CreateItem",
        .tuple([
          .array(elementType: "{sv}", [.dictEntry(.string("org.freedesktop.Secret.Item.Label"), .variant(.uint32(3)))]),
          secret(plain, [], [1]), .boolean(false),
        ]))
      expectError(
        invalid, kept, Interfaces.properties, "Set", .tuple([.string(item), .string("Label"), .variant(.uint32(1))]))
      // Missing objects.
      expectError(
        noObjectAtPath, "/org/freedesktop/secrets/collection/session/99999", item, "GetSecret",
        .tuple([.objectPath(plain)]))
      expectError(
        noObjectAtPath, "/org/freedesktop/secrets/collection/session/99999", Interfaces.properties, "Get",
        .tuple([.string(item), .string("Label")]))
      expectError(
        noObjectAtPath, "/org/freedesktop/secrets/collection/session/99999", Interfaces.properties, "GetAll",
        .tuple([.string(item)]))
      expectError(
        noObjectAtPath, "/org/freedesktop/secrets/collection/nothing", Interfaces.properties, "GetAll",
        .tuple([.string(Interfaces.collection)]))
      expectError(
        noObjectAtPath, "/org/freedesktop/secrets/aliases/nothing", Interfaces.collection, "CreateItem",
        create(secret(plain, [], [1])))
      expectError(
        noObjectAtPath, "/org/freedesktop/secrets/collection/nothing", Interfaces.collection, "Delete", .tuple([]))
      expectError(
        noObject, self.service, service, "SetAlias",
        .tuple([.string("x"), .objectPath("/org/freedesktop/secrets/collection/nothing")]))
      expectError("org.freedesktop.DBus.Error.UnknownMethod", self.service, service, "Explode", .tuple([]))

      // Still up, data intact.
      #expect(isRunning(instance.pid))
      #expect(try client.plainSecret(kept, session: plain) == Array("kept".utf8))
      #expect(try instance.secretTool(["lookup", "keep", "me"]).stdoutText == "kept")
    }
  }

  @Test("a short (minimal-encoding) client public key is accepted")
  func shortPublicKey() async throws {
    try await withProvider(.secretd) { (instance) async throws in
      let client = try RawClient(address: instance.busAddress)
      // Find a key pair whose public key has a leading zero byte, and send it without it.
      var pair = try DiffieHellman.makeKeyPair()
      while pair.publicKey[0] != 0 { pair = try DiffieHellman.makeKeyPair() }
      let reply = try client.call(
        "/org/freedesktop/secrets", Interfaces.service, "OpenSession",
        .tuple([
          .string(TransferSession.Algorithm.dh.rawValue), .variant(.bytes(Array(pair.publicKey.drop { $0 == 0 }))),
        ]))
      let serverKey = try #require(reply.child(0)?.unboxed?.publicBytes)
      let session = try #require(reply.child(1)?.string)
      let key = try serverKey.withUnsafeBytes { try KeyAgreement.deriveKey(pair, peerKey: $0) }
      let sealed = try Array("short key".utf8).withUnsafeBytes {
        try SecretWireFormat.make(
          $0, contentType: "text/plain", for: TransferSession(number: 0, owner: "", algorithm: .dh, key: key),
          at: session)
      }
      let created = try client.call(
        "/org/freedesktop/secrets/aliases/default", Interfaces.collection, "CreateItem",
        .tuple([
          RawClient.itemProperties(label: "k", attributes: ["short": "key"]), sealed,
          .boolean(true),
        ]))
      #expect(created.child(0)?.string?.hasPrefix("/org/freedesktop/secrets/collection/session/") == true)
      #expect(try instance.secretTool(["lookup", "short", "key"]).stdoutText == "short key")
    }
  }
}
