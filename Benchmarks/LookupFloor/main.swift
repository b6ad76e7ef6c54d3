// lookup-floor SERVICE ACCOUNT: the least a lookup can cost within secretctl's design (Swift,
// GIO's D-Bus, a DH transfer session), timed by SecretctlBenchmark beside `secretctl get` and
// `secret-tool lookup`. It makes only the calls a lookup needs (the bus's Hello, OpenSession,
// SearchItems, GetSecrets) on GIO's connection, agrees the key with the same TransferCrypto
// secretctl uses, prints the secret, and skips all else secretctl does: no libsecret object,
// no proxy, no Foundation, no locked-item or several-match handling, no error messages, and
// the secret decrypted in ordinary memory. Exit status 1 on any failure.
import CLibSecret
import Glibc
import SecretMemory
import TransferCrypto

func fail() -> Never { exit(1) }

func call(_ connection: OpaquePointer, _ method: String, _ arguments: [OpaquePointer?], returning type: String)
  -> OpaquePointer
{
  var arguments = arguments
  let tuple = g_variant_new_tuple(&arguments, gsize(arguments.count))
  let reply = type.withCString { type in
    g_dbus_connection_call_sync(
      connection, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", method,
      tuple, g_variant_type_checked_(type), G_DBUS_CALL_FLAGS_NONE, -1, nil, nil)
  }
  guard let reply else { fail() }
  return reply
}

func bytes(of variant: OpaquePointer?) -> UnsafeRawBufferPointer {
  var count: gsize = 0
  let base = g_variant_get_fixed_array(variant, &count, 1)
  return UnsafeRawBufferPointer(start: base, count: Int(count))
}

func string(of variant: OpaquePointer?, at index: Int) -> String {
  let child = g_variant_get_child_value(variant, gsize(index))
  defer { g_variant_unref(child) }
  return String(cString: g_variant_get_string(child, nil))
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) else { fail() }
Gcrypt.initialize()
guard let pair = try? DiffieHellman.makeKeyPair() else { fail() }
let publicKey = pair.publicKey.withUnsafeBytes { raw in
  "y".withCString { g_variant_new_fixed_array(g_variant_type_checked_($0), raw.baseAddress, gsize(raw.count), 1) }
}
let opened = call(
  connection, "OpenSession",
  [g_variant_new_string("dh-ietf1024-sha256-aes128-cbc-pkcs7"), g_variant_new_variant(publicKey)], returning: "(vo)")
let session = string(of: opened, at: 1)
let boxed = g_variant_get_child_value(opened, 0)
guard let key = SecretBytes(lockedCount: DiffieHellman.aesKeyLength),
  let peer = try? DiffieHellman.validPeerKey(bytes(of: g_variant_get_variant(boxed))),
  (try? key.withUnsafeMutableBytes { try DiffieHellman.deriveKey(pair, peer: peer, into: $0) }) != nil
else { fail() }

let builder = "a{ss}".withCString { g_variant_builder_new(g_variant_type_checked_($0)) }
for (name, value) in [("service", arguments[1]), ("account", arguments[2])] {
  g_variant_builder_add_value(
    builder, g_variant_new_dict_entry(g_variant_new_string(name), g_variant_new_string(value)))
}
let found = call(connection, "SearchItems", [g_variant_builder_end(builder)], returning: "(aoao)")
let unlocked = g_variant_get_child_value(found, 0)
guard g_variant_n_children(unlocked) > 0 else { fail() }

let secrets = call(
  connection, "GetSecrets", [unlocked, g_variant_new_object_path(session)], returning: "(a{o(oayays)})")
let entry = g_variant_get_child_value(g_variant_get_child_value(secrets, 0), 0)
let secret = g_variant_get_child_value(entry, 1)
var value = Array(bytes(of: g_variant_get_child_value(secret, 2)))
let iv = bytes(of: g_variant_get_child_value(secret, 1))
let length = value.withUnsafeMutableBytes { data in
  key.withUnsafeBytes { try? PaddedCBC.decrypt(data, iv: iv, key: $0) }
}
guard let length else { fail() }
_ = write(1, value, length)
