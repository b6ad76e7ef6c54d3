// 4,000 calls built from secretd's own declarations (`Interfaces.all`: every interface, method and
// argument type), aimed at live objects made first and remade as calls delete them: each call is
// answered, every declared method's handler answers a minimum of them in each run, the answers the
// fuzzer can predict are right, the daemon stays up, and the items of a collection no call names
// stay intact, byte for byte. The seed is printed; FUZZ_SEED=N replays a run.
import Foundation
import GLibBridge
import SecretTestSupport
import Testing

@testable import SecretDaemon

@Suite("fuzzing")
struct FuzzTests {
  static let calls = 4_000
  /// Calls each declared method's handler must answer in a run, and answers of each kind the
  /// oracle must check: a run makes about 170 calls to each method, of which 110 to 170 reached
  /// its handler in ten runs, and checks 140 to 200 of each kind.
  static let minimumReached = 60

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

  @Test("the tally tells the router's refusals from the handlers' answers")
  func tallyTellsRouterFromHandlers() async throws {
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      func answer(_ path: String, _ interface: String, _ member: String, _ arguments: DBusValue = .tuple([]))
        -> FuzzTally.Answer
      {
        let outcome = Result { () throws(GLibError) in try client.call(path, interface, member, arguments) }
        return FuzzTally.answer(
          to: FuzzCall(path: path, interface: interface, member: member, arguments: arguments), outcome)
      }
      let root = ObjectPaths.root
      // Refused before any handler: a wrong signature, no object at the path, an interface the
      // object lacks, an undeclared member, no collection at a collection path, no prompt path.
      #expect(answer(root, Interfaces.service, "OpenSession", .tuple([.uint32(1)])) == .refusedBeforeHandler)
      #expect(answer("/org/example", Interfaces.peer, "Ping") == .refusedBeforeHandler)
      #expect(answer(root, Interfaces.item, "Delete") == .refusedBeforeHandler)
      #expect(answer(root, Interfaces.service, "NoSuchMethod") == .refusedBeforeHandler)
      #expect(answer(ObjectPaths.collection("nothing"), Interfaces.collection, "Delete") == .refusedBeforeHandler)
      #expect(answer(ObjectPaths.prompts + "/p01", Interfaces.prompt, "Dismiss") == .refusedBeforeHandler)
      // Answered by handlers, with a success or an error of their own.
      #expect(answer(root, Interfaces.service, "ReadAlias", .tuple([.string("default")])) == .succeeded)
      let rot13 = DBusValue.tuple([.string("rot13"), .variant(.string(""))])
      #expect(answer(root, Interfaces.service, "OpenSession", rot13) == .handlerError)
      #expect(answer(root, Interfaces.properties, "Get", .tuple([.string("x"), .string("y")])) == .handlerError)
      #expect(answer(ObjectPaths.prompt(1), Interfaces.prompt, "Dismiss") == .handlerError)
    }
  }

  @Test("4,000 declared calls: each answered, every handler reached, known answers right, kept items intact")
  func declaredCalls() async throws {
    let environment = ProcessInfo.processInfo.environment
    let seed = environment["FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
    print("fuzzing secretd with seed \(seed) (FUZZ_SEED=\(seed) replays it)")
    try await withProvider(.secretd) { instance in
      let client = try RawClient(address: instance.busAddress)
      let kept = try KeptItems(client)
      let other = try RawClient(address: instance.busAddress)
      let foreignSession = try other.openPlainSession()
      let random = FuzzRandom(seed: seed)
      let targets = try FuzzTargets(
        client: client, foreignSession: foreignSession, protected: kept.collection, random: random)
      let arguments = try FuzzArguments(random: random, targets: targets)
      var tally = FuzzTally()
      var oracle = FuzzOracle()
      let start = ContinuousClock.now
      for _ in 0..<Self.calls {
        try targets.upkeep()
        let call = try arguments.nextCall()
        let outcome = Result { () throws(GLibError) in
          try client.connection.call(
            destination: client.destination, path: call.path, interface: call.interface, method: call.member,
            arguments: call.arguments, timeoutMilliseconds: 10_000)
        }
        tally.record(call, outcome)
        oracle.check(call, outcome, targets: targets)
        if case .success(let reply) = outcome { try targets.learn(from: call, reply: reply) }
      }
      let summary =
        "seed \(seed): \(Self.calls) calls, and \(targets.upkeepCalls) to keep targets alive, in "
        + "\(ContinuousClock.now - start); \(oracle.refusalsChecked) refusals and \(oracle.secretsChecked) "
        + "secrets read back as they must be\n\(tally.table)"
      print(summary)
      #expect(tally.unanswered.isEmpty, "unanswered: \(tally.unanswered.prefix(5))\n\(summary)")
      #expect(oracle.wrongAnswers.isEmpty, "wrong answers: \(oracle.wrongAnswers.prefix(5))\n\(summary)")
      #expect(min(oracle.refusalsChecked, oracle.secretsChecked) >= Self.minimumReached, "\(summary)")
      for method in FuzzTally.declared {
        let reached = tally.reached(method)
        #expect(
          reached >= Self.minimumReached,
          "\(method) reached its handler \(reached) times, under \(Self.minimumReached)\n\(summary)")
      }
      #expect(isRunning(instance.pid), "seed \(seed)")
      // Through the other connection's session: it stayed open all along, so the calls that named
      // it were refused as naming another connection's session, not a closed one.
      try kept.expectIntact(reader: other, session: foreignSession, seed: seed)
    }
  }
}

/// Items in a collection that no fuzzed call names, to be found intact after the run.
private struct KeptItems {
  let collection: String
  let items: [(path: String, secret: [UInt8])]

  init(_ client: RawClient) throws {
    let session = try client.openPlainSession()
    let created = try client.call(
      ObjectPaths.root, Interfaces.service, "CreateCollection",
      .tuple([
        .array(
          elementType: "{sv}", [.dictEntry(.string(Interfaces.collection + ".Label"), .variant(.string("kept")))]),
        .string(""),
      ]))
    let collection = try #require(created.child(0)?.string)
    self.collection = collection
    items = try (0..<20).map { index in
      let secret = Array("kept-\(index)-".utf8) + (0..<16).map { _ in UInt8.random(in: 0...255) }
      let path = try client.createPlainItem(
        session: session, collection: collection, attributes: ["kept": "\(index)"], secret: secret)
      return (path, secret)
    }
  }

  /// Expects the collection to hold exactly these items, each with its secret byte for byte, read
  /// through `session` of `reader`.
  func expectIntact(reader: RawClient, session: String, seed: UInt64) throws {
    let listed = try reader.call(
      collection, Interfaces.properties, "Get", .tuple([.string(Interfaces.collection), .string("Items")]))
    #expect(listed.child(0)?.unboxed?.objectPaths?.sorted() == items.map(\.path).sorted(), "seed \(seed)")
    for (path, secret) in items {
      #expect(try reader.plainSecret(path, session: session) == secret, "seed \(seed): \(path)")
    }
  }
}
