// The fuzzer's calls, built from secretd's own declarations (`Interfaces.all`): a declared method,
// a path of a live object that implements its interface, and for each declared input argument a
// value of its declared type that means something to the handler (a session of the caller, item
// properties named after the Item interface's writable properties, valid and invalid DH keys,
// secrets encoded for the session they name), with mutations of each: a value of another type, a
// well-typed value that means nothing, an argument too many or too few, an undeclared member.
import GLibBridge
import Testing

@testable import SecretDaemon
@testable import TransferCrypto

/// One fuzzed call, and what the fuzzer knows of what its answer must be.
struct FuzzCall {
  var path: String
  var interface: String
  var member: String
  var arguments: DBusValue = .tuple([])
  /// False for the few calls that name a member the interface does not declare.
  var isDeclared = true
  /// The key pair whose public half a DH OpenSession sent.
  var keyPair: DiffieHellman.KeyPair?
  /// The secret a CreateItem or SetSecret carried, well encoded for a live session of the caller.
  var sentSecret: FuzzTargets.StoredSecret?
  /// The caller's live session that a GetSecret or GetSecrets names, whose key opens the answer.
  var readingSession: FuzzTargets.Session?
  /// Why the call must be refused, when it was built to be.
  var mustFail: String?

  var name: String { "\(interface).\(member)" }

  /// Forgets what the fuzzer knew of the answer, once a mutation may have made it untrue.
  mutating func forgetExpectations() {
    (keyPair, sentSecret, readingSession, mustFail) = (nil, nil, nil, nil)
  }
}

struct FuzzArguments {
  /// Every declared method with its interface's name, in a fixed order (so that a seed replays).
  static let methods: [(interface: String, method: DeclaredMethod)] = Interfaces.all.keys.sorted().flatMap { name in
    (Interfaces.all[name]?.methods ?? []).map { (name, $0) }
  }
  /// Every input type a method declares.
  static let declaredTypes: [BusType] = methods.flatMap {
    $0.method.inputs.compactMap { BusType.parse($0.type)?.first }
  }
  /// The interface whose writable properties name the keys of a creating method's `properties`.
  static let createdInterface = ["CreateCollection": Interfaces.collection, "CreateItem": Interfaces.item]

  let random: FuzzRandom
  let targets: FuzzTargets
  let limits = Limits()
  /// DH public keys that are no element of the group's useful range, or of no valid length.
  let invalidPublicKeys: [[UInt8]]

  init(random: FuzzRandom, targets: FuzzTargets) throws {
    self.random = random
    self.targets = targets
    let count = OakleyGroup2.byteCount
    let prime = try BigInteger.fromHex(OakleyGroup2.primeHex)
    func bytes(_ number: BigInteger?) throws -> [UInt8] {
      var bytes = [UInt8](repeating: 0, count: count)
      try bytes.withUnsafeMutableBytes { try #require(number).write(paddedTo: count, into: $0) }
      return bytes
    }
    invalidPublicKeys = [
      [], [0], [1], try bytes(.small(1)), [UInt8](repeating: 0, count: count), try bytes(prime.minus(1)),
      try bytes(prime), [UInt8](repeating: 0xFF, count: count), [1] + [UInt8](repeating: 0x55, count: count),
      [UInt8](repeating: 0x55, count: 4096),
    ]
  }

  // MARK: Calls

  func nextCall() throws -> FuzzCall {
    if random.chance(0.02) { return undeclaredCall() }
    let (interface, method) = random.pick(Self.methods)
    var call = FuzzCall(path: targets.path(implementing: interface), interface: interface, member: method.name)
    var values: [DBusValue] = []
    var mutated = false
    for argument in method.inputs {
      let type = try #require(BusType.parse(argument.type)?.first)
      if random.chance(0.05) {
        values.append(mutation(of: type))
        mutated = true
      } else {
        values.append(try meaningful(argument, type, earlier: values, call: &call))
      }
    }
    if random.chance(0.05) {
      values = reshaped(values)
      mutated = true
    }
    if call.interface == Interfaces.session, call.member == "Close",
      call.path == targets.foreignSession || targets.isClosedSession(call.path)
    {
      call.mustFail = "it closes a session this connection does not have"
    }
    if mutated { call.forgetExpectations() }
    call.arguments = .tuple(values)
    return call
  }

  /// A member no interface declares, or an interface no object has.
  private func undeclaredCall() -> FuzzCall {
    let (interface, member) =
      random.chance(0.5) ? ("org.example.Nothing", "Ping") : (random.pick(Self.methods).interface, "NoSuchMethod")
    return FuzzCall(
      path: targets.anyPath(), interface: interface, member: member,
      arguments: .tuple((0..<random.int(0...2)).map { _ in value(of: randomType(depth: 0)) }), isDeclared: false)
  }

  /// A value for `argument` that its handler reads as meant, chosen by the argument's declared
  /// name and type; a value of its type for names the fuzzer does not know.
  private func meaningful(_ argument: Argument, _ type: BusType, earlier: [DBusValue], call: inout FuzzCall) throws
    -> DBusValue
  {
    switch (argument.name, argument.type) {
    case ("algorithm", "s"): return .string(algorithm())
    case ("input", "v"): return try sessionInput(algorithm: earlier.first?.text, call: &call)
    case ("properties", "a{sv}"): return properties(of: Self.createdInterface[call.member])
    case ("name", "s"): return .string(aliasName())
    case ("alias", "s"): return .string(random.chance(0.5) ? "" : aliasName())
    case ("collection", "o"): return .objectPath(random.chance(0.15) ? ObjectPaths.none : targets.collectionPath())
    case ("session", "o"):
      let (path, session) = sessionPath(call: &call)
      call.readingSession = session
      return .objectPath(path)
    case (_, "(oayays)"): return try secret(call: &call)
    case ("interface_name", "s"): return .string(interfaceName(at: call.path))
    case ("property_name", "s"):
      return .string(propertyName(of: earlier.first?.text ?? "", writing: call.member == "Set"))
    case ("value", "v"): return propertyValue(interface: earlier.first?.text, name: earlier.last?.text)
    default: return value(of: type)
    }
  }

  // MARK: Sessions and secrets

  private func algorithm() -> String {
    random.oneOf([
      (45, { TransferSession.Algorithm.plain.rawValue }), (45, { TransferSession.Algorithm.dh.rawValue }),
      (10, { random.pick(["", "PLAIN", "rot13", TransferSession.Algorithm.dh.rawValue + "-x", random.text()]) }),
    ])
  }

  private enum KeyChoice {
    case valid, validWithLeadingZero, invalid, notBytes
  }

  private func sessionInput(algorithm: String?, call: inout FuzzCall) throws -> DBusValue {
    switch algorithm {
    case TransferSession.Algorithm.dh.rawValue?:
      switch random.weighted([(65, KeyChoice.valid), (5, .validWithLeadingZero), (25, .invalid), (5, .notBytes)]) {
      case .valid, .validWithLeadingZero:
        let pair = try DiffieHellman.makeKeyPair()
        call.keyPair = pair
        return .variant(.bytes(random.chance(0.9) ? pair.publicKey : [0] + pair.publicKey))
      case .invalid:
        call.mustFail = "its DH public key is invalid"
        return .variant(.bytes(random.pick(invalidPublicKeys)))
      case .notBytes:
        call.mustFail = "its DH input is no byte array"
        return .variant(.string(random.text()))
      }
    case TransferSession.Algorithm.plain.rawValue?:
      return .variant(random.chance(0.85) ? .string("") : value(of: randomType(depth: 1)))
    default:
      call.mustFail = "it names an unsupported algorithm"
      return .variant(value(of: randomType(depth: 1)))
    }
  }

  private enum SessionChoice {
    case own, foreign, closed, none, stray
  }

  /// A session path: mostly one of the caller's live sessions, returned with it.
  private func sessionPath(call: inout FuzzCall) -> (path: String, session: FuzzTargets.Session?) {
    switch random.weighted([(80, SessionChoice.own), (7, .foreign), (5, .closed), (4, .none), (4, .stray)]) {
    case .own:
      let session = random.pick(targets.sessions)
      return (session.path, session)
    case .foreign:
      call.mustFail = "it names another connection's session"
      return (targets.foreignSession, nil)
    case .closed where !targets.closedSessions.isEmpty:
      call.mustFail = "it names a closed session"
      return (random.pick(targets.closedSessions), nil)
    case .closed, .none:
      call.mustFail = "it names no session"
      return (ObjectPaths.none, nil)
    case .stray:
      return (targets.anyPath(), nil)
    }
  }

  /// An (oayays) secret: mostly encoded as the caller's session it names expects.
  private func secret(call: inout FuzzCall) throws -> DBusValue {
    let plain = random.bytes(secretLength())
    let contentType = random.weighted([
      (60, "text/plain"), (20, "application/octet-stream"), (10, ""), (5, "é"),
      (5, String(repeating: "t", count: limits.maxAttributeLength + 1)),
    ])
    let (path, session) = sessionPath(call: &call)
    guard let session else { return secretValue(path, [], plain, contentType) }
    guard let key = session.key else {
      call.sentSecret = FuzzTargets.StoredSecret(bytes: plain, contentType: contentType)
      // A plain session ignores the parameters.
      return secretValue(path, random.chance(0.9) ? [] : random.bytes(random.size()), plain, contentType)
    }
    let sealed = try plain.withUnsafeBytes { try TransferCipher.encrypt($0, key: key) }
    switch random.int(0...19) {
    case 0:
      call.mustFail = "its IV is not 16 bytes"
      return secretValue(path, random.bytes(random.pick([0, 15, 17])), sealed.ciphertext, contentType)
    case 1:
      call.mustFail = "its cipher text is no whole number of blocks"
      return secretValue(path, sealed.iv, Array(sealed.ciphertext.dropLast(random.int(1...16))), contentType)
    case 2:
      // Not encrypted: the padding decides whether it is refused.
      return secretValue(path, sealed.iv, plain, contentType)
    default:
      call.sentSecret = FuzzTargets.StoredSecret(bytes: plain, contentType: contentType)
      return secretValue(path, sealed.iv, sealed.ciphertext, contentType)
    }
  }

  private func secretValue(_ session: String, _ parameters: [UInt8], _ value: [UInt8], _ contentType: String)
    -> DBusValue
  {
    .tuple([.objectPath(session), .bytes(parameters), .bytes(value), .string(contentType)])
  }

  /// Mostly small, sometimes at a block boundary, large, or past the limit.
  private func secretLength() -> Int {
    random.oneOf([
      (5, { 0 }), (55, { random.int(1...64) }), (20, { random.int(65...1_000) }), (10, { random.int(15...17) }),
      (6, { random.int(4_000...70_000) }), (3, { 70_000 }), (1, { limits.maxSecretSize + 1 }),
    ])
  }

  // MARK: Properties, aliases, attributes

  /// The `a{sv}` of a creating method: the created interface's writable properties by their
  /// full names, mostly with values of their declared types.
  private func properties(of interface: String?) -> DBusValue {
    let writable = interface.flatMap { Interfaces.all[$0] }?.properties.filter { $0.set != nil } ?? []
    var entries: [DBusValue] = writable.filter { _ in random.chance(0.8) }.map { property in
      let type = random.chance(0.95) ? BusType.parse(property.type)?.first : nil
      return .dictEntry(
        .string("\(interface ?? "").\(property.name)"), .variant(value(of: type ?? randomType(depth: 1))))
    }
    if random.chance(0.1) {
      let key = random.pick(["x", "\(interface ?? "").Locked", "\(Interfaces.item).Label", random.text()])
      entries.append(.dictEntry(.string(key), .variant(value(of: randomType(depth: 1)))))
    }
    return .array(elementType: "{sv}", entries)
  }

  private func aliasName() -> String {
    random.oneOf([
      (5, { "" }), (75, { random.pick(FuzzTargets.aliasNames) }),
      (20, { random.pick(["bad name!", "é", String(repeating: "a", count: 129), random.text()]) }),
    ])
  }

  /// Mostly an interface of the object at `path` that has properties.
  private func interfaceName(at path: String) -> String {
    let own = ObjectNode(path: path)?.allInterfaces ?? []
    let withProperties = own.filter { !(Interfaces.all[$0]?.properties.isEmpty ?? true) }
    return random.oneOf([
      (80, { random.pick(withProperties.isEmpty ? own + ["org.example.Nothing"] : withProperties) }),
      (12, { random.pick(Interfaces.all.keys.sorted()) }), (8, { random.pick(["", "org.example.Nothing"]) }),
    ])
  }

  /// Mostly a property `interface` declares (a writable one, mostly, for `Set`).
  private func propertyName(of interface: String, writing: Bool) -> String {
    let properties = Interfaces.all[interface]?.properties ?? []
    let writable = properties.filter { $0.set != nil }
    guard !properties.isEmpty, random.chance(0.85) else {
      return random.pick(["Nothing", "", "Collections", "Items", "Label", "Attributes"])
    }
    return random.pick(writing && !writable.isEmpty && random.chance(0.75) ? writable : properties).name
  }

  /// Mostly a value of the property's declared type.
  private func propertyValue(interface: String?, name: String?) -> DBusValue {
    let declared = interface.flatMap { Interfaces.all[$0] }?.property(name ?? "")
    let type = random.chance(0.85) ? declared.flatMap { BusType.parse($0.type)?.first } : nil
    return .variant(value(of: type ?? randomType(depth: 1)))
  }

  /// Attributes from the targets' vocabulary, sometimes an expiry, too many or too long.
  private func attributes() -> DBusValue {
    var attributes: [String: String] = [:]
    for _ in 0..<random.int(0...3) {
      attributes[random.pick(FuzzTargets.attributeNames)] = random.pick(FuzzTargets.attributeValues)
    }
    switch random.int(0...19) {
    case 0: attributes["xdg:expires"] = random.pick(["4102444800", "1", "soon", "-5", ""])
    case 1: for index in 0...limits.maxAttributes { attributes["k\(index)"] = "v" }
    case 2: attributes[random.pick(FuzzTargets.attributeNames)] = String(repeating: "v", count: random.size())
    default: break
    }
    return .stringDictionary(attributes)
  }

  // MARK: Any type

  /// Object paths: a few live items and collections (by name or alias), or anything; now and
  /// then many, repeated, or more than a call may name.
  private func pathList() -> DBusValue {
    let count = random.weighted([
      (85, random.int(0...4)), (10, random.int(50...200)), (5, 0), (1, limits.maxPathsPerCall + 1),
    ])
    let pool = (0..<min(count, 20)).map { _ in
      random.oneOf([(45, targets.itemPath), (35, targets.collectionPath), (20, targets.anyPath)])
    }
    return .objectPaths((0..<count).map { _ in random.pick(pool) })
  }

  /// A value of `type`: paths and attributes from the targets, anything else at random.
  private func value(of type: BusType, depth: Int = 0) -> DBusValue {
    switch type {
    case .string: return .string(random.text())
    case .objectPath: return .objectPath(targets.anyPath())
    case .boolean: return .boolean(random.chance(0.5))
    case .uint32: return .uint32(UInt32(truncatingIfNeeded: random.uint64()))
    case .uint64: return .uint64(random.uint64())
    case .bytes: return .bytes(random.bytes(random.size()))
    case .variant: return .variant(value(of: randomType(depth: depth + 1), depth: depth + 1))
    case .array(.objectPath): return pathList()
    case .dictionary(.string, .string): return attributes()
    case .array(let element):
      return .array(elementType: element.signature, elements(depth) { value(of: element, depth: depth + 1) })
    case .dictionary(let key, let value):
      return .array(
        elementType: "{" + key.signature + value.signature + "}",
        elements(depth) { .dictEntry(self.value(of: key, depth: depth + 1), self.value(of: value, depth: depth + 1)) })
    case .structure(let members): return .tuple(members.map { value(of: $0, depth: depth + 1) })
    }
  }

  private func elements(_ depth: Int, _ make: () -> DBusValue) -> [DBusValue] {
    (0..<(depth > 2 ? random.int(0...1) : random.weighted([(90, random.int(0...3)), (10, 50)]))).map { _ in make() }
  }

  /// A random type, nested at most three deep; sometimes one a method declares.
  private func randomType(depth: Int) -> BusType {
    let basic: [BusType] = [.string, .objectPath, .boolean, .uint32, .uint64, .bytes]
    guard depth < 3 else { return random.pick(basic) }
    return random.oneOf([
      (55, { random.pick(basic) }), (10, { random.pick(Self.declaredTypes) }), (7, { .variant }),
      (10, { .array(randomType(depth: depth + 1)) }),
      (8, { .dictionary(key: random.pick([.string, .objectPath, .uint32]), value: randomType(depth: depth + 1)) }),
      (10, { .structure((0..<random.int(1...4)).map { _ in randomType(depth: depth + 1) }) }),
    ])
  }

  // MARK: Mutations

  /// A value of another type, or of the same type meaning nothing.
  private func mutation(of type: BusType) -> DBusValue {
    random.chance(0.5) ? value(of: randomType(depth: 0)) : value(of: type)
  }

  /// An argument too few or too many, or other arguments altogether.
  private func reshaped(_ values: [DBusValue]) -> [DBusValue] {
    var values = values
    switch random.int(0...3) {
    case 0 where !values.isEmpty: values.remove(at: random.int(0...values.count - 1))
    case 1: values.append(value(of: randomType(depth: 0)))
    case 2 where !values.isEmpty: values.append(random.pick(values))
    default: values = (0..<random.int(0...3)).map { _ in value(of: randomType(depth: 0)) }
    }
    return values
  }
}

extension DBusValue {
  /// The text of a string or object path value.
  fileprivate var text: String? {
    switch self {
    case .string(let text), .objectPath(let text): text
    default: nil
    }
  }
}
