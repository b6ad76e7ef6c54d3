import CLibSecret
import GLibBridge

/// A `GHashTable` of D-Bus property names to `GVariant`s, for creating collections and items.
struct PropertyTable: ~Copyable {
  let table: OpaquePointer

  init(_ properties: [String: DBusValue]) {
    table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, { g_variant_unref(OpaquePointer($0)) })
    for (name, value) in properties {
      g_hash_table_insert(table, g_strdup(name), UnsafeMutableRawPointer(g_variant_ref_sink(value.makeFloating())))
    }
  }

  deinit {
    g_hash_table_unref(table)
  }
}

/// Calls `body` with the `GVariantType` for `signature`, valid for the call only (the type is
/// the C string itself, which must outlive its use).
func withVariantType<T>(_ signature: String, _ body: (OpaquePointer) throws(SecretError) -> T) throws(SecretError) -> T
{
  let result: Result<T, SecretError> = signature.withCString { text in
    Result { () throws(SecretError) in try body(g_variant_type_checked_(text)) }
  }
  return try result.get()
}
