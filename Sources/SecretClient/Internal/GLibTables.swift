import CLibSecret
import GLibBridge

/// A `GHashTable` of strings to strings, the form libsecret takes attributes in.
struct AttributeTable: ~Copyable {
  let table: OpaquePointer

  init(_ attributes: [String: String]) {
    // The table owns copies of keys and values and frees them with g_free.
    table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
    for (name, value) in attributes {
      g_hash_table_insert(table, g_strdup(name), g_strdup(value))
    }
  }

  deinit {
    g_hash_table_unref(table)
  }

  /// Reads a string-to-string `GHashTable` that the caller owns, and releases it.
  static func take(_ table: OpaquePointer?) -> [String: String] {
    guard let table else { return [:] }
    defer { g_hash_table_unref(table) }
    var attributes: [String: String] = [:]
    forEachEntry(of: table) { key, value in
      attributes[String(cString: key.assumingMemoryBound(to: gchar.self))] = String(
        cString: value.assumingMemoryBound(to: gchar.self))
    }
    return attributes
  }
}

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

/// Walks a `GList` of GObjects the caller owns, then frees the list and its references.
func takeObjects<T>(_ list: UnsafeMutablePointer<GList>?, _ transform: (gpointer) -> T) -> [T] {
  defer { g_list_free_full(list, g_object_unref) }
  var results: [T] = []
  var node = list
  while let current = node {
    if let data = current.pointee.data { results.append(transform(data)) }
    node = current.pointee.next
  }
  return results
}

/// Calls `body` with each key and value of a `GHashTable` (borrowed: the table keeps them).
func forEachEntry(of table: OpaquePointer, _ body: (gpointer, gpointer) -> Void) {
  var iterator = GHashTableIter()
  g_hash_table_iter_init(&iterator, table)
  var key: gpointer?
  var value: gpointer?
  while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
    if let key, let value { body(key, value) }
  }
}
