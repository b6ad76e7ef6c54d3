// The generic half of the fuzzer: D-Bus types parsed from the daemon's declared signatures, and
// the one seeded source of every random choice, size and byte, so that a run replays from its seed.
import GLibBridge

/// A D-Bus type the fuzzer can build values of: those `DBusValue` carries.
indirect enum BusType: Equatable, Sendable {
  case string
  case objectPath
  case boolean
  case uint32
  case uint64
  /// `ay` (a lone byte is not a value `DBusValue` carries).
  case bytes
  case variant
  case array(BusType)
  /// `a{kv}`.
  case dictionary(key: BusType, value: BusType)
  case structure([BusType])

  /// The complete types of `signature` (such as `a{sv}s`); nil when one of them is not a type
  /// the fuzzer can build.
  static func parse(_ signature: String) -> [BusType]? {
    var rest = Substring(signature)
    var types: [BusType] = []
    while !rest.isEmpty {
      guard let type = parseOne(&rest) else { return nil }
      types.append(type)
    }
    return types
  }

  private static func parseOne(_ rest: inout Substring) -> BusType? {
    switch rest.popFirst() {
    case "s": return .string
    case "o": return .objectPath
    case "b": return .boolean
    case "u": return .uint32
    case "t": return .uint64
    case "v": return .variant
    case "a":
      if rest.first == "y" {
        rest.removeFirst()
        return .bytes
      }
      guard rest.first == "{" else { return parseOne(&rest).map(BusType.array) }
      rest.removeFirst()
      guard let key = parseOne(&rest), let value = parseOne(&rest), rest.popFirst() == "}" else { return nil }
      return .dictionary(key: key, value: value)
    case "(":
      var members: [BusType] = []
      while rest.first != ")" {
        guard !rest.isEmpty, let member = parseOne(&rest) else { return nil }
        members.append(member)
      }
      rest.removeFirst()
      return .structure(members)
    default:
      return nil
    }
  }

  var signature: String {
    switch self {
    case .string: "s"
    case .objectPath: "o"
    case .boolean: "b"
    case .uint32: "u"
    case .uint64: "t"
    case .bytes: "ay"
    case .variant: "v"
    case .array(let element): "a" + element.signature
    case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
    case .structure(let members): "(" + members.map(\.signature).joined() + ")"
    }
  }
}

/// The run's one source of randomness: every choice the fuzzer makes draws from it, so a seed
/// replays a run.
final class FuzzRandom {
  private var generator: SeededGenerator

  init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

  func uint64() -> UInt64 { generator.next() }

  func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

  func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &generator) < probability }

  /// One of `choices`, which must not be empty.
  func pick<T>(_ choices: [T]) -> T { choices[int(0...choices.count - 1)] }

  /// One of `choices`, each as likely as its weight.
  func weighted<T>(_ choices: [(Int, T)]) -> T {
    var roll = int(0...choices.reduce(0) { $0 + $1.0 } - 1)
    for (weight, choice) in choices {
      if roll < weight { return choice }
      roll -= weight
    }
    return choices[choices.count - 1].1
  }

  /// The value of one of `makers`, each as likely to run as its weight; only that one runs.
  func oneOf<T, E: Error>(_ makers: [(Int, () throws(E) -> T)]) throws(E) -> T {
    try weighted(makers)()
  }

  func bytes(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count { withUnsafeBytes(of: generator.next()) { bytes += $0 } }
    return Array(bytes.prefix(count))
  }

  /// A length for a string, byte array or list: mostly small, sometimes past the daemon's limits
  /// on attributes (4,096 bytes) and far past them.
  func size() -> Int {
    oneOf([
      (30, { self.int(0...3) }), (30, { self.int(4...64) }), (20, { self.int(65...1_000) }),
      (12, { self.int(4_000...5_000) }), (8, { 70_000 }),
    ])
  }

  /// A string of `size()`-like length: letters, non-ASCII, or one of a few meaningful words.
  func text() -> String {
    oneOf([
      (40, { String(repeating: "x", count: self.size()) }),
      (20, { String(repeating: "é", count: self.size() / 2) }),
      (
        40,
        {
          self.pick([
            "", "default", "session", "login", "text/plain", "org.freedesktop.Secret.Item.Label", "a b", "../..",
            "%s%n", "\u{1F511}", "\u{FEFF}", "x\u{0301}",
          ])
        }
      ),
    ])
  }
}

/// A reproducible random source (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
