// One declaration per D-Bus member: a method's arguments, the lock it takes, how much work it
// may do and its handler; a property's type and accessors; a signal's arguments. Introspection
// XML, the argument check, the store lock, the reading thread's quick path and the dispatch all
// come from these declarations, so adding a method means adding one entry.
import GLibBridge

/// How a call touches the store: not at all, reading, or writing.
enum StoreAccess: Sendable {
  case none, read, write
}

/// How much work a call may do, which decides whether it may ever run on the thread that reads
/// the bus (when nothing else is waiting): only work with a small bound may.
enum CallCost: Sendable {
  /// Small, whatever the arguments and the store hold.
  case bounded
  /// Grows with the store or the arguments: always answered on a worker thread.
  case unbounded
  /// Small for some arguments only; the predicate decides from the object's path and the
  /// arguments, under the store's read lock.
  case boundedWhen(@Sendable (_ daemon: Daemon, _ path: String, _ arguments: Variant) -> Bool)
}

/// One argument of a method or signal, as introspection shows it.
struct Argument: Sendable {
  let name: String
  let type: String

  init(_ name: String, _ type: String) {
    self.name = name
    self.type = type
  }
}

/// A method of the objects of type `Object`.
struct Method<Object>: Sendable {
  let name: String
  let inputs: [Argument]
  let outputs: [Argument]
  let access: StoreAccess
  let cost: CallCost
  /// The handler, given the call's body: its arguments are read as the inputs declare them,
  /// and what it throws becomes a D-Bus error.
  let handler: @Sendable (Object, Variant, CallContext) throws(DBusError) -> DBusValue

  /// A method taking `inputs`, whose values reach `handler` typed, in their order, after the
  /// object and the call's context.
  init<each Value>(
    _ name: String, in inputs: repeat Input<each Value>, out outputs: [Argument] = [], access: StoreAccess,
    cost: CallCost = .bounded,
    _ handler: @escaping @Sendable (Object, CallContext, repeat each Value) throws -> DBusValue
  ) {
    var arguments: [Argument] = []
    var carriesSecret = false
    for input in repeat each inputs {
      arguments.append(input.argument)
      carriesSecret = carriesSecret || input.type.carriesSecret
    }
    (self.name, self.inputs, self.outputs, self.access, self.cost) = (name, arguments, outputs, access, cost)
    let declared = (repeat each inputs)
    self.handler = { [carriesSecret] object, body, context throws(DBusError) in
      if carriesSecret { context.receivedPlainSecret = true }
      return try DBusError.reporting {
        var position = 0
        let values = (repeat try (each declared).read(from: body, at: &position, of: name))
        return try handler(object, context, repeat each values)
      }
    }
  }
}

/// A property of the objects of type `Object`; writable when it has a setter.
struct Property<Object>: Sendable {
  let name: String
  let type: String
  /// Whether reading it is small work whatever the store holds (a list of items is not).
  let isBounded: Bool
  let get: @Sendable (Object) throws(DBusError) -> DBusValue
  let set: (@Sendable (Object, Variant) throws(DBusError) -> Void)?

  /// A read-only property of D-Bus type `type`.
  init(
    _ name: String, _ type: String, isBounded: Bool = true, get: @escaping @Sendable (Object) throws -> DBusValue
  ) {
    (self.name, self.type, self.isBounded, set) = (name, type, isBounded, nil)
    self.get = { object throws(DBusError) in try DBusError.reporting { try get(object) } }
  }

  /// A writable property, whose new value reaches `set` typed.
  init<Value>(
    _ name: String, _ type: WireType<Value>, get: @escaping @Sendable (Object) throws -> DBusValue,
    set: @escaping @Sendable (Object, Value) throws -> Void
  ) {
    (self.name, self.type, isBounded) = (name, type.signature, true)
    self.get = { object throws(DBusError) in try DBusError.reporting { try get(object) } }
    self.set = { object, value throws(DBusError) in
      guard let typed = type.read(value) else { throw .invalidArgs("\(name) is \(type.signature)") }
      try DBusError.reporting { try set(object, typed) }
    }
  }
}

/// An object the router can make from a path once it exists, on which a declared interface runs.
/// Its type is sent to the worker threads that make it (`SendableMetatype`).
protocol BusObject: SendableMetatype {
  /// The object `node` names; throws when it does not exist.
  init(daemon: Daemon, node: ObjectNode) throws(DBusError)
}

/// Everything an interface has, on objects of type `Object`.
struct InterfaceDeclaration<Object: BusObject>: Sendable {
  let name: String
  let methods: [Method<Object>]
  let properties: [Property<Object>]

  init(_ name: String, methods: [Method<Object>], properties: [Property<Object>] = []) {
    self.name = name
    self.methods = methods
    self.properties = properties
  }

  /// The signals sent on this interface.
  var signals: [BusSignal] { BusSignal.allCases.filter { $0.interface == name } }

  /// The same interface on objects made from their path, for the router's table.
  var erased: DeclaredInterface {
    DeclaredInterface(
      name: name, methods: methods.map(Self.erase), properties: properties.map(Self.erase), signals: signals)
  }

  private static func erase(_ method: Method<Object>) -> DeclaredMethod {
    let handler = method.handler
    let run: @Sendable (Daemon, ObjectNode, Variant, CallContext) throws(DBusError) -> DBusValue = {
      daemon, node, arguments, context throws(DBusError) in
      let object = try Object(daemon: daemon, node: node)
      return try handler(object, arguments, context)
    }
    return DeclaredMethod(
      name: method.name, inputs: method.inputs, outputs: method.outputs, access: method.access, cost: method.cost,
      run: run)
  }

  private static func erase(_ property: Property<Object>) -> DeclaredProperty {
    let getter = property.get
    let get: @Sendable (Daemon, ObjectNode) throws(DBusError) -> DBusValue = { daemon, node throws(DBusError) in
      let object = try Object(daemon: daemon, node: node)
      return try getter(object)
    }
    var set: (@Sendable (Daemon, ObjectNode, Variant) throws(DBusError) -> Void)?
    if let setter = property.set {
      set = { daemon, node, value throws(DBusError) in
        let object = try Object(daemon: daemon, node: node)
        try setter(object, value)
      }
    }
    return DeclaredProperty(name: property.name, type: property.type, isBounded: property.isBounded, get: get, set: set)
  }
}

/// A method whose object is made from the call's path.
struct DeclaredMethod: Sendable {
  let name: String
  let inputs: [Argument]
  let outputs: [Argument]
  let access: StoreAccess
  let cost: CallCost
  let run: @Sendable (Daemon, ObjectNode, Variant, CallContext) throws(DBusError) -> DBusValue
  /// The tuple type a call's body must have, such as `(sv)`.
  let inputSignature: String

  init(
    name: String, inputs: [Argument], outputs: [Argument], access: StoreAccess, cost: CallCost,
    run: @escaping @Sendable (Daemon, ObjectNode, Variant, CallContext) throws(DBusError) -> DBusValue
  ) {
    (self.name, self.inputs, self.outputs, self.access, self.cost, self.run) = (
      name, inputs, outputs, access, cost, run
    )
    inputSignature = "(" + inputs.map(\.type).joined() + ")"
  }
}

/// A property whose object is made from the call's path.
struct DeclaredProperty: Sendable {
  let name: String
  let type: String
  let isBounded: Bool
  let get: @Sendable (Daemon, ObjectNode) throws(DBusError) -> DBusValue
  let set: (@Sendable (Daemon, ObjectNode, Variant) throws(DBusError) -> Void)?
}

/// An interface in the router's table.
struct DeclaredInterface: Sendable {
  let name: String
  let methods: [DeclaredMethod]
  let properties: [DeclaredProperty]
  let signals: [BusSignal]

  func method(_ name: String) -> DeclaredMethod? { methods.first { $0.name == name } }
  func property(_ name: String) -> DeclaredProperty? { properties.first { $0.name == name } }

  /// The interface as introspection XML, indented for a `<node>`.
  var xml: String {
    var lines = ["  <interface name=\"\(name)\">"]
    for method in methods {
      let arguments =
        method.inputs.map { "      <arg type=\"\($0.type)\" name=\"\($0.name)\" direction=\"in\"/>" }
        + method.outputs.map { "      <arg type=\"\($0.type)\" name=\"\($0.name)\" direction=\"out\"/>" }
      lines += Self.element("method", method.name, arguments)
    }
    for signal in signals {
      lines += Self.element(
        "signal", signal.name, signal.arguments.map { "      <arg type=\"\($0.type)\" name=\"\($0.name)\"/>" })
    }
    for property in properties {
      let access = property.set == nil ? "read" : "readwrite"
      lines.append("    <property type=\"\(property.type)\" name=\"\(property.name)\" access=\"\(access)\"/>")
    }
    lines.append("  </interface>")
    return lines.joined(separator: "\n") + "\n"
  }

  private static func element(_ kind: String, _ name: String, _ children: [String]) -> [String] {
    guard !children.isEmpty else { return ["    <\(kind) name=\"\(name)\"/>"] }
    return ["    <\(kind) name=\"\(name)\">"] + children + ["    </\(kind)>"]
  }
}
