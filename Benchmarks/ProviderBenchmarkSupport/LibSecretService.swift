public import CLibSecret

public struct BenchmarkError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// Takes a GError's message and frees it.
public func message(_ error: UnsafeMutablePointer<GError>?) -> String {
  guard let error else { return "unknown error" }
  defer { g_error_free(error) }
  return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
}

/// A connection of its own to the bus at `address`.
public func connect(_ address: String) throws -> OpaquePointer {
  var error: UnsafeMutablePointer<GError>?
  let flags = GDBusConnectionFlags(
    G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
  guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
    throw BenchmarkError("connect: \(message(error))")
  }
  return connection
}

/// A libsecret SecretService on a connection of its own, storing, looking up and deleting the items
/// `service=bench.example.com account=user-INDEX` whose secret is `secret-value-INDEX`.
public final class LibSecretService {
  let raw: UnsafeMutablePointer<SecretService>
  let connection: OpaquePointer

  public init(address: String, busName: String) throws {
    connection = try connect(address)
    var error: UnsafeMutablePointer<GError>?
    guard let service = clibsecret_service_new(connection, busName, &error) else {
      g_object_unref(UnsafeMutableRawPointer(connection))
      throw BenchmarkError("open SecretService: \(message(error))")
    }
    raw = service
  }

  deinit {
    g_object_unref(UnsafeMutableRawPointer(raw))
    g_object_unref(UnsafeMutableRawPointer(connection))
  }

  func attributes(_ index: Int) throws -> OpaquePointer {
    guard let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) else {
      throw BenchmarkError("g_hash_table_new_full failed")
    }
    g_hash_table_insert(table, g_strdup("service"), g_strdup("bench.example.com"))
    g_hash_table_insert(table, g_strdup("account"), g_strdup("user-\(index)"))
    return table
  }

  /// Stores item `index` in `collection` (an alias or a collection's name), replacing it.
  public func store(_ index: Int, in collection: String) throws {
    let table = try attributes(index)
    defer { g_hash_table_unref(table) }
    let secret = "secret-value-\(index)"
    let value = secret.withCString { secret_value_new($0, -1, "text/plain") }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var error: UnsafeMutablePointer<GError>?
    guard secret_service_store_sync(raw, nil, table, collection, "bench \(index)", value, nil, &error) != 0 else {
      throw BenchmarkError("store \(index): \(message(error))")
    }
  }

  /// Deletes item `index` (libsecret searches for it, then deletes what it found); throws when
  /// there was none.
  public func clear(_ index: Int) throws {
    let table = try attributes(index)
    defer { g_hash_table_unref(table) }
    var error: UnsafeMutablePointer<GError>?
    guard secret_service_clear_sync(raw, nil, table, nil, &error) != 0 else {
      throw BenchmarkError("clear \(index): \(error == nil ? "not found" : message(error))")
    }
  }

  /// Looks item `index` up and checks its secret.
  public func lookup(_ index: Int) throws {
    let table = try attributes(index)
    defer { g_hash_table_unref(table) }
    var error: UnsafeMutablePointer<GError>?
    guard let value = secret_service_lookup_sync(raw, nil, table, nil, &error) else {
      throw BenchmarkError("lookup \(index): \(error == nil ? "not found" : message(error))")
    }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var length = 0
    let bytes = secret_value_get(value, &length)
    let text = bytes.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) }
    guard text == "secret-value-\(index)" else { throw BenchmarkError("lookup \(index): wrong value") }
  }
}
