// A few thousand calls of random shapes and sizes to every method of every interface, from a
// client that also closes sessions and sends garbage: the daemon answers each with a reply or
// an error, stays up, and keeps every item it held.
import Foundation
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("fuzzing")
struct FuzzTests {
  /// Every method and Properties call, by object path kind.
  static let targets: [(path: String, interface: String, method: String)] = [
    ("/org/freedesktop/secrets", Interfaces.service, "OpenSession"),
    ("/org/freedesktop/secrets", Interfaces.service, "CreateCollection"),
    ("/org/freedesktop/secrets", Interfaces.service, "SearchItems"),
    ("/org/freedesktop/secrets", Interfaces.service, "Unlock"),
    ("/org/freedesktop/secrets", Interfaces.service, "Lock"),
    ("/org/freedesktop/secrets", Interfaces.service, "GetSecrets"),
    ("/org/freedesktop/secrets", Interfaces.service, "ReadAlias"),
    ("/org/freedesktop/secrets", Interfaces.service, "SetAlias"),
    ("/org/freedesktop/secrets/collection/fuzz", Interfaces.collection, "SearchItems"),
    ("/org/freedesktop/secrets/collection/fuzz", Interfaces.collection, "CreateItem"),
    ("/org/freedesktop/secrets/collection/fuzz", Interfaces.collection, "Delete"),
    ("/org/freedesktop/secrets/aliases/default", Interfaces.collection, "CreateItem"),
    ("ITEM", Interfaces.item, "GetSecret"),
    ("ITEM", Interfaces.item, "SetSecret"),
    ("ITEM", Interfaces.item, "Delete"),
    ("/org/freedesktop/secrets/session/s1", Interfaces.session, "Close"),
    ("/org/freedesktop/secrets/prompt/p1", Interfaces.prompt, "Prompt"),
    ("/org/freedesktop/secrets/prompt/p1", Interfaces.prompt, "Dismiss"),
    ("ITEM", Interfaces.properties, "Get"),
    ("ITEM", Interfaces.properties, "GetAll"),
    ("ITEM", Interfaces.properties, "Set"),
    ("/org/freedesktop/secrets/collection/fuzz", Interfaces.properties, "Set"),
    ("/org/freedesktop/secrets", Interfaces.introspectable, "Introspect"),
    ("/org/freedesktop/secrets/collection", Interfaces.peer, "Ping"),
  ]

  @Test("every argument and property type secretd declares is one the fuzzer builds")
  func declaredTypesAreBuilt() {
    let types = Interfaces.all.values.flatMap {
      $0.methods.flatMap { $0.inputs.map(\.type) } + $0.properties.map(\.type)
    }
    for type in types {
      #expect(BusType.parse(type)?.map(\.signature).joined() == type, "\(type)")
    }
    for unbuilt in ["i", "ai", "a{sv", "(s"] {
      #expect(BusType.parse(unbuilt) == nil, "\(unbuilt)")
    }
  }

  @Test("4,000 random calls: each answered, the daemon up, every kept item intact")
  func randomCalls() async throws {
    var generator = SeededGenerator(seed: UInt64(Date().timeIntervalSince1970))
    let seed = generator.state
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      let session = try client.openPlainSession()
      // Kept in a collection no fuzzed call names.
      let created = try client.call(
        ObjectPaths.root, Interfaces.service, "CreateCollection",
        .tuple([
          .array(
            elementType: "{sv}",
            [.dictEntry(.string("org.freedesktop.Secret.Collection.Label"), .variant(.string("kept")))]), .string(""),
        ]))
      let keptCollection = try #require(created.child(0)?.string)
      var kept: [(path: String, secret: [UInt8])] = []
      for index in 0..<20 {
        let secret = Array("kept-\(index)-".utf8) + (0..<16).map { _ in UInt8.random(in: 0...255) }
        kept.append(
          (
            try client.createPlainItem(
              session: session, collection: keptCollection, attributes: ["kept": "\(index)"], secret: secret), secret
          ))
      }
      var unanswered: [String] = []
      for _ in 0..<4_000 {
        let target = Self.targets.randomElement(using: &generator)!
        let path = target.path == "ITEM" ? Self.randomItemPath(&generator) : target.path
        let arguments = Self.randomArguments(&generator, session: session)
        do throws(GLibError) {
          _ = try client.connection.call(
            destination: "org.freedesktop.secrets", path: path, interface: target.interface, method: target.method,
            arguments: arguments, timeoutMilliseconds: 10_000)
        } catch {
          // Every failure must be an answer from the daemon, not a timeout or a lost peer.
          if error.remoteName == nil { unanswered.append("\(target.method) on \(path): \(error.message)") }
        }
      }
      #expect(unanswered.count == 0, "seed \(seed): \(unanswered.prefix(5))")
      #expect(isRunning(instance.pid), "seed \(seed)")
      let reader = try RawClient(address: instance.busAddress)
      let readSession = try reader.openPlainSession()
      for (path, secret) in kept {
        #expect(try reader.plainSecret(path, session: readSession) == secret, "seed \(seed)")
      }
    }
  }

  /// A valid object path (the bus accepts no other) near, on or past the items that exist.
  static func randomItemPath(_ generator: inout SeededGenerator) -> String {
    let collection = ["session", "fuzz", "nothing", "default"].randomElement(using: &generator)!
    let number = ["1", "2", "07", "0", "99999999999999999999", "x", ""].randomElement(using: &generator)!
    return "/org/freedesktop/secrets/" + ["collection/", "aliases/"].randomElement(using: &generator)! + collection
      + (number.isEmpty ? "" : "/" + number)
  }

  /// A tuple of 0 to 4 random values of random types and sizes.
  static func randomArguments(_ generator: inout SeededGenerator, session: String) -> DBusValue {
    .tuple(
      (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(&generator, session: session, depth: 0) })
  }

  static func randomValue(_ generator: inout SeededGenerator, session: String, depth: Int) -> DBusValue {
    let size = [0, 1, 3, 100, 5_000, 70_000].randomElement(using: &generator)!
    switch Int.random(in: 0...(depth > 2 ? 6 : 10), using: &generator) {
    case 0: return .string(String(repeating: "é", count: size / 2))
    case 1:
      return .objectPath(
        [session, "/", "/org/freedesktop/secrets/session/s1", "/org/freedesktop/secrets/collection/session/1"]
          .randomElement(using: &generator)!)
    case 2: return .boolean(Bool.random(using: &generator))
    case 3: return .uint32(UInt32.random(in: 0...UInt32.max, using: &generator))
    case 4: return .uint64(UInt64.random(in: 0...UInt64.max, using: &generator))
    case 5: return .bytes((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
    case 6:
      return .string(
        ["plain", "dh-ietf1024-sha256-aes128-cbc-pkcs7", "", "default", "text/plain"].randomElement(using: &generator)!)
    case 7:
      return .array(
        elementType: "{ss}",
        (0..<min(size, 80)).map { .dictEntry(.string("k\($0)"), .string(String(repeating: "v", count: size % 200))) })
    case 8:
      return .array(
        elementType: "{sv}",
        (0..<min(size, 5)).map { _ in
          .dictEntry(
            .string(
              ["org.freedesktop.Secret.Item.Label", "org.freedesktop.Secret.Item.Attributes", "x"].randomElement(
                using: &generator)!), .variant(randomValue(&generator, session: session, depth: depth + 1)))
        })
    case 9:
      return .tuple([
        .objectPath(session), .bytes([]), randomValue(&generator, session: session, depth: depth + 1),
        .string("text/plain"),
      ])
    default:
      return .variant(randomValue(&generator, session: session, depth: depth + 1))
    }
  }
}
