// Benchmark: secretd against gnome-keyring, each on its own private bus, driven by the same
// libsecret C calls (secret_service_store_sync / secret_service_lookup_sync) on a SecretService
// opened on that bus. Prints stores/s and lookups/s at 300 and 1,300 items, each daemon's
// resident memory, and the ratios.
import CLibSecret
import Foundation
import SecretTestSupport

struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
}

/// Takes a GError's message and frees it.
func message(_ error: UnsafeMutablePointer<GError>?) -> String {
  guard let error else { return "unknown error" }
  defer { g_error_free(error) }
  return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
}

/// A libsecret SecretService on a chosen bus connection.
final class Service {
  let raw: UnsafeMutablePointer<SecretService>
  let connection: OpaquePointer

  init(address: String, busName: String) throws {
    var error: UnsafeMutablePointer<GError>?
    let flags = GDBusConnectionFlags(
      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
      throw BenchmarkError(description: "connect: \(message(error))")
    }
    self.connection = connection
    guard let service = clibsecret_service_new(connection, busName, &error) else {
      throw BenchmarkError(description: "open SecretService: \(message(error))")
    }
    raw = service
  }

  deinit {
    g_object_unref(UnsafeMutableRawPointer(raw))
    g_object_unref(UnsafeMutableRawPointer(connection))
  }

  func attributes(_ index: Int) throws -> OpaquePointer {
    guard let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) else {
      throw BenchmarkError(description: "g_hash_table_new_full failed")
    }
    g_hash_table_insert(table, g_strdup("service"), g_strdup("bench.example.com"))
    g_hash_table_insert(table, g_strdup("account"), g_strdup("user-\(index)"))
    return table
  }

  func store(_ index: Int) throws {
    let table = try attributes(index)
    defer { g_hash_table_unref(table) }
    let secret = "secret-value-\(index)"
    let value = secret.withCString { secret_value_new($0, -1, "text/plain") }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var error: UnsafeMutablePointer<GError>?
    guard secret_service_store_sync(raw, nil, table, nil, "bench \(index)", value, nil, &error) != 0 else {
      throw BenchmarkError(description: "store \(index): \(message(error))")
    }
  }

  func lookup(_ index: Int) throws {
    let table = try attributes(index)
    defer { g_hash_table_unref(table) }
    var error: UnsafeMutablePointer<GError>?
    guard let value = secret_service_lookup_sync(raw, nil, table, nil, &error) else {
      throw BenchmarkError(description: "lookup \(index): \(error == nil ? "not found" : message(error))")
    }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var length = 0
    let bytes = secret_value_get(value, &length)
    let text = bytes.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) }
    guard text == "secret-value-\(index)" else { throw BenchmarkError(description: "lookup \(index): wrong value") }
  }
}

struct Figures {
  var storesPerSecond: [Int: Double] = [:]
  var lookupsPerSecond: [Int: Double] = [:]
  /// The daemon's own CPU time per operation, in microseconds.
  var daemonMicrosPerStore: [Int: Double] = [:]
  var daemonMicrosPerLookup: [Int: Double] = [:]
  var residentKiB = 0
}

/// User + system CPU seconds of `pid` (/proc/PID/stat fields 14 and 15).
func cpuSeconds(_ pid: Int32) -> Double {
  guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = stat.lastIndex(of: ")")
  else { return 0 }
  let fields = stat[stat.index(after: close)...].split(separator: " ")
  guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
  return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func residentKiB(_ pid: Int32) -> Int {
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
    let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
  else { return 0 }
  return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func measure(_ provider: Provider, sizes: [Int]) async throws -> Figures {
  try await withProvider(provider) { instance in
    let service = try Service(address: instance.busAddress, busName: instance.busName)
    try service.store(-1)  // warm up: the first store may create the default collection
    var figures = Figures()
    var stored = 0
    for size in sizes {
      let start = stored
      var cpu = cpuSeconds(instance.pid)
      let storing = try seconds { for index in start..<size { try service.store(index) } }
      figures.daemonMicrosPerStore[size] = (cpuSeconds(instance.pid) - cpu) * 1e6 / Double(size - start)
      stored = size
      figures.storesPerSecond[size] = Double(size - start) / storing
      let lookups = 1000
      cpu = cpuSeconds(instance.pid)
      let looking = try seconds { for round in 0..<lookups { try service.lookup((round * 7919) % size) } }
      figures.daemonMicrosPerLookup[size] = (cpuSeconds(instance.pid) - cpu) * 1e6 / Double(lookups)
      figures.lookupsPerSecond[size] = Double(lookups) / looking
      print(
        "  \(provider) at \(size) items: \(Int(figures.storesPerSecond[size] ?? 0)) stores/s, "
          + "\(Int(figures.lookupsPerSecond[size] ?? 0)) lookups/s; daemon CPU per store "
          + "\(Int(figures.daemonMicrosPerStore[size] ?? 0)) µs, per lookup \(Int(figures.daemonMicrosPerLookup[size] ?? 0)) µs")
    }
    figures.residentKiB = residentKiB(instance.pid)
    return figures
  }
}

let sizes = [300, 1300]
print("secretd vs gnome-keyring: libsecret secret_service_store_sync / secret_service_lookup_sync, one client")
let secretd = try await measure(.secretd, sizes: sizes)
let keyring = try await measure(.gnomeKeyring, sizes: sizes)

func format(_ value: Double) -> String { String(format: "%.0f", value) }
func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.1fx", a / b) : "n/a" }

print("")
print("| items | secretd stores/s | gnome-keyring stores/s | ratio | secretd lookups/s | gnome-keyring lookups/s | ratio |")
print("|---|---|---|---|---|---|---|")
for size in sizes {
  let (ss, ks) = (secretd.storesPerSecond[size] ?? 0, keyring.storesPerSecond[size] ?? 0)
  let (sl, kl) = (secretd.lookupsPerSecond[size] ?? 0, keyring.lookupsPerSecond[size] ?? 0)
  print("| \(size) | \(format(ss)) | \(format(ks)) | \(ratio(ss, ks)) | \(format(sl)) | \(format(kl)) | \(ratio(sl, kl)) |")
}
print("")
print("resident memory after 1,300 items: secretd \(secretd.residentKiB) KiB, gnome-keyring \(keyring.residentKiB) KiB (\(ratio(Double(keyring.residentKiB), Double(secretd.residentKiB))) smaller)")
let flatStore = (secretd.storesPerSecond[1300] ?? 0) / max(secretd.storesPerSecond[300] ?? 1, 1)
let flatLookup = (secretd.lookupsPerSecond[1300] ?? 0) / max(secretd.lookupsPerSecond[300] ?? 1, 1)
print("secretd flatness (rate at 1,300 / rate at 300): stores \(String(format: "%.2f", flatStore)), lookups \(String(format: "%.2f", flatLookup))")
