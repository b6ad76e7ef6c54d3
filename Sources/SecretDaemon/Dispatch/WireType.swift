// The D-Bus types that methods and writable properties take, each with the Swift value it
// arrives as. A declaration names its inputs with these, so the signature a call is checked
// against and the reading of its arguments come from one place.
import GLibBridge

/// A D-Bus type and how a value of it reaches a handler.
struct WireType<Value>: Sendable {
  let signature: String
  /// Its bytes may be a secret sent in clear: the message that carried it is scrubbed from the
  /// bus reader's buffer once the call is answered, whatever the answer.
  var carriesSecret = false
  let read: @Sendable (Variant) -> Value?
}

extension WireType where Value == String {
  static var string: Self { WireType(signature: "s") { $0.isOfType("s") ? $0.string : nil } }
  static var objectPath: Self { WireType(signature: "o") { $0.isOfType("o") ? $0.string : nil } }
}

extension WireType where Value == Bool {
  static var boolean: Self { WireType(signature: "b") { $0.boolean } }
}

extension WireType where Value == UInt32 {
  static var uint32: Self { WireType(signature: "u") { $0.uint32 } }
}

extension WireType where Value == [String: String] {
  static var stringDictionary: Self { WireType(signature: "a{ss}") { $0.stringDictionary } }
}

extension WireType where Value == [String: Variant] {
  static var variantDictionary: Self { WireType(signature: "a{sv}") { $0.variantDictionary } }
}

extension WireType where Value == PathList {
  static var objectPaths: Self { WireType(signature: "ao") { PathList($0) } }
}

extension WireType where Value == Variant {
  /// A `v`, unboxed.
  static var variant: Self { WireType(signature: "v") { $0.unboxed } }
  /// An `ay` holding a passphrase, left in the message so that it is copied only into locked
  /// memory.
  static var passphrase: Self { WireType(signature: "ay", carriesSecret: true) { $0.isOfType("ay") ? $0 : nil } }
  /// The Secret Service's secret struct, read by ``SecretWireFormat`` (which asks for the scrub
  /// when its session is `plain`: a DH secret is ciphertext).
  static var secret: Self { WireType(signature: "(oayays)") { $0.isOfType("(oayays)") ? $0 : nil } }
}

/// An `ao` as it arrived: its length is known before its paths are copied out, so a call can
/// refuse a long list before doing any work for it.
struct PathList {
  let count: Int
  private let array: Variant

  init?(_ array: Variant) {
    guard array.isOfType("ao") else { return nil }
    self.array = array
    count = array.childCount
  }

  var paths: [String] { array.objectPaths ?? [] }
}

/// One input of a method: its name, for introspection and messages, and its type.
struct Input<Value>: Sendable {
  let argument: Argument
  let type: WireType<Value>

  init(_ name: String, _ type: WireType<Value>) {
    argument = Argument(name, type.signature)
    self.type = type
  }

  /// The argument at `position` of a call's body, which moves on to the next.
  func read(from arguments: Variant, at position: inout Int, of method: String) throws(DBusError) -> Value {
    defer { position += 1 }
    guard let child = arguments.child(position), let value = type.read(child) else {
      throw .invalidArgs("\(method): \(argument.name) must be \(type.signature)")
    }
    return value
  }
}
