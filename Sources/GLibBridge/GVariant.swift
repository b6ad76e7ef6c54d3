// GVariant wrappers: the only place that builds or reads GVariant values, for the client and
// the daemon alike.
import CGio

/// A value to send on the bus, built in Swift and turned into a GVariant in one place.
///
/// Secret bytes never become a `DBusValue` as a Swift array: ``copyingBytes(_:)`` copies them
/// straight into a GVariant.
package enum DBusValue {
  case string(String)
  case objectPath(String)
  case boolean(Bool)
  case uint64(UInt64)
  case uint32(UInt32)
  case bytes([UInt8])
  /// A GVariant made already (its bytes copied in while they could be read).
  case made(Variant)
  /// An array whose element type is given as a D-Bus signature (needed when it is empty).
  case array(elementType: String, [DBusValue])
  // Only the cases that hold a value directly are boxed: every boxed case is one more allocation.
  indirect case dictEntry(DBusValue, DBusValue)
  case tuple([DBusValue])
  indirect case variant(DBusValue)

  package static func objectPaths(_ paths: [String]) -> DBusValue {
    .array(elementType: "o", paths.map { .objectPath($0) })
  }

  package static func stringDictionary(_ dictionary: [String: String]) -> DBusValue {
    .array(
      elementType: "{ss}",
      dictionary.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) })
  }

  /// An `ay` holding a copy of `bytes` made now, in GLib's heap until GDBus has serialised the
  /// message; GLib frees it without wiping. Only a `plain` session sends a secret this way: the
  /// client chose to send it in clear over the bus, and this copy (like the message buffer GDBus
  /// serialises it into) is outside our control.
  package static func copyingBytes(_ bytes: UnsafeRawBufferPointer) -> DBusValue {
    .made(Variant(adopting: byteArray(bytes)))
  }

  /// A new floating `ay` holding a copy of `bytes`. The type string is converted inside the
  /// call that uses it: a pointer made from a Swift string lives only as long as that call.
  /// Wraps g_variant_new_fixed_array.
  private static func byteArray(_ bytes: UnsafeRawBufferPointer) -> OpaquePointer {
    "y".withCString { g_variant_new_fixed_array(cgio_variant_type($0), bytes.baseAddress, gsize(bytes.count), 1) }
  }

  /// Builds a new floating GVariant (the consumer sinks it). Wraps g_variant_new_*.
  package func makeFloating() -> OpaquePointer {
    switch self {
    case .string(let value):
      return g_variant_new_string(value)
    case .objectPath(let value):
      return g_variant_new_object_path(value)
    case .boolean(let value):
      return g_variant_new_boolean(value ? 1 : 0)
    case .uint64(let value):
      return g_variant_new_uint64(guint64(value))
    case .uint32(let value):
      return g_variant_new_uint32(value)
    case .bytes(let value):
      return value.withUnsafeBytes { Self.byteArray($0) }
    case .made(let variant):
      // Containers take their own reference of a child that is not floating; so does a reply.
      return variant.raw
    case .array(let elementType, let elements):
      return Self.withFloating(elements) { children in
        elementType.withCString {
          g_variant_new_array(cgio_variant_type($0), children.baseAddress, gsize(children.count))
        }
      }
    case .dictEntry(let key, let value):
      return g_variant_new_dict_entry(key.makeFloating(), value.makeFloating())
    case .tuple(let elements):
      return Self.withFloating(elements) { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    case .variant(let inner):
      return g_variant_new_variant(inner.makeFloating())
    }
  }
}

extension DBusValue {
  /// Runs `body` with the elements made floating, in a buffer on the stack where they fit: a
  /// heap array per container was most of what building a call allocated.
  private static func withFloating(
    _ elements: [DBusValue], _ body: (UnsafeMutableBufferPointer<OpaquePointer?>) -> OpaquePointer
  ) -> OpaquePointer {
    withUnsafeTemporaryAllocation(of: OpaquePointer?.self, capacity: elements.count) { children in
      for (index, element) in elements.enumerated() {
        children.initializeElement(at: index, to: element.makeFloating())
      }
      defer { children.deinitialize() }
      return body(children)
    }
  }
}

/// A GVariant received from the bus; owns one reference. Wraps g_variant_ref / g_variant_unref.
package final class Variant {
  package let raw: OpaquePointer

  /// Takes an extra reference on a borrowed GVariant.
  package init(borrowing raw: OpaquePointer) {
    self.raw = g_variant_ref(raw)
  }

  /// Adopts a reference returned to us (transfer full), sinking it if floating.
  package init(adopting raw: OpaquePointer) {
    self.raw = g_variant_take_ref(raw)
  }

  deinit { g_variant_unref(raw) }

  /// The D-Bus type signature, such as `(sv)`. Wraps g_variant_get_type_string.
  package var typeString: String { String(cString: g_variant_get_type_string(raw)) }

  package func isOfType(_ signature: String) -> Bool {
    signature.withCString { g_variant_is_of_type(raw, cgio_variant_type($0)) != 0 }
  }

  package var childCount: Int { Int(g_variant_n_children(raw)) }

  /// Wraps g_variant_get_child_value.
  package func child(_ index: Int) -> Variant? {
    guard g_variant_is_container(raw) != 0, index < childCount else { return nil }
    guard let value = g_variant_get_child_value(raw, gsize(index)) else { return nil }
    return Variant(adopting: value)
  }

  /// Strings and object paths. Wraps g_variant_get_string.
  package var string: String? {
    guard isOfType("s") || isOfType("o") || isOfType("g") else { return nil }
    guard let chars = g_variant_get_string(raw, nil) else { return nil }
    return String(cString: chars)
  }

  /// Wraps g_variant_get_uint32.
  package var uint32: UInt32? {
    guard isOfType("u") else { return nil }
    return g_variant_get_uint32(raw)
  }

  /// Wraps g_variant_get_uint64.
  package var uint64: UInt64? {
    guard isOfType("t") else { return nil }
    return UInt64(g_variant_get_uint64(raw))
  }

  package var boolean: Bool? {
    guard isOfType("b") else { return nil }
    return g_variant_get_boolean(raw) != 0
  }

  /// The content of a `v`. Wraps g_variant_get_variant.
  package var unboxed: Variant? {
    guard isOfType("v"), let inner = g_variant_get_variant(raw) else { return nil }
    return Variant(adopting: inner)
  }

  /// Reads an `ay` in place; the pointer is valid only inside `body`.
  /// Wraps g_variant_get_fixed_array.
  package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
    guard isOfType("ay") else { return nil }
    var count: gsize = 0
    let pointer = g_variant_get_fixed_array(raw, &count, 1)
    return try body(UnsafeRawBufferPointer(start: count == 0 ? nil : pointer, count: Int(count)))
  }

  /// Copies an `ay` that is not secret (public keys, IVs).
  package var publicBytes: [UInt8]? { withBytes { Array($0) } }

  /// Elements of any array.
  package var elements: [Variant] {
    guard g_variant_is_container(raw) != 0 else { return [] }
    return (0..<childCount).compactMap { child($0) }
  }

  /// An `ao` as paths.
  package var objectPaths: [String]? {
    isOfType("ao") ? stringElements() : nil
  }

  /// An `as` as strings.
  package var strings: [String]? {
    isOfType("as") ? stringElements() : nil
  }

  /// An `a{ss}`; nil if of another type. Read in place, with no object per entry.
  /// Wraps g_variant_get_child_value.
  package var stringDictionary: [String: String]? {
    guard isOfType("a{ss}") else { return nil }
    var result: [String: String] = [:]
    for index in 0..<childCount {
      let entry = g_variant_get_child_value(raw, gsize(index))
      defer { g_variant_unref(entry) }
      let key = g_variant_get_child_value(entry, 0)
      let value = g_variant_get_child_value(entry, 1)
      defer { [key, value].forEach { g_variant_unref($0) } }
      result[String(cString: g_variant_get_string(key, nil))] = String(cString: g_variant_get_string(value, nil))
    }
    return result
  }

  /// The strings of an array already checked to hold strings or object paths, read in place.
  private func stringElements() -> [String] {
    (0..<childCount).map { index in
      let child = g_variant_get_child_value(raw, gsize(index))
      defer { g_variant_unref(child) }
      return String(cString: g_variant_get_string(child, nil))
    }
  }

  /// An `a{sv}` with the variants unboxed; nil if of another type.
  package var variantDictionary: [String: Variant]? {
    guard isOfType("a{sv}") else { return nil }
    var result: [String: Variant] = [:]
    for entry in elements {
      guard let key = entry.child(0)?.string, let value = entry.child(1)?.unboxed else { return nil }
      result[key] = value
    }
    return result
  }
}
