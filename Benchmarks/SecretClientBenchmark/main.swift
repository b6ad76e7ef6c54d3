// Stores and lookups per second through SecretClient and through a plain libsecret loop
// (`secret_service_store_sync` / `secret_service_lookup_sync` on a libsecret service object),
// against the same provider on a private bus, in one run. Prints the cost of the Swift layer.
import CLibSecret
import Foundation
import SecretClient
import SecretTestSupport

let storeCount = 300
let lookupCount = 1_000
let rounds = 3

/// The plain C loop: what a C program using libsecret's service API does.
struct RawLoop {
  let service: UnsafeMutablePointer<CLibSecret.SecretService>

  /// libsecret's service object on a connection of its own to `address` (the process-wide
  /// session bus cannot follow the benchmark from one private bus to the next).
  init(address: String, busName: String) throws {
    var error: UnsafeMutablePointer<GError>?
    let flags = GDBusConnectionFlags(
      rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error),
      let service = clibsecret_service_new(connection, busName, &error)
    else {
      throw HarnessError("libsecret could not open the service: \(error.map { String(cString: $0.pointee.message) } ?? "?")")
    }
    g_object_unref(UnsafeMutableRawPointer(connection))
    self.service = service
  }

  func store(_ index: Int) {
    let attributes = g_hash_table_new(g_str_hash, g_str_equal)
    defer { g_hash_table_unref(attributes) }
    withAttributes(index, table: attributes) {
      let value = secret_value_new("secret-\(index)", -1, "text/plain")
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      precondition(secret_service_store_sync(service, nil, attributes, "default", "raw \(index)", value, nil, nil) != 0)
    }
  }

  func lookup(_ index: Int) {
    let attributes = g_hash_table_new(g_str_hash, g_str_equal)
    defer { g_hash_table_unref(attributes) }
    withAttributes(index, table: attributes) {
      guard let value = secret_service_lookup_sync(service, nil, attributes, nil, nil) else { fatalError("raw lookup missed") }
      secret_value_unref(UnsafeMutableRawPointer(value))
    }
  }

  private func withAttributes(_ index: Int, table: OpaquePointer?, _ body: () -> Void) {
    "bench-raw".withCString { service in
      "\(index % storeCount)".withCString { account in
        "service".withCString { serviceKey in
          "account".withCString { accountKey in
            g_hash_table_insert(table, UnsafeMutableRawPointer(mutating: serviceKey), UnsafeMutableRawPointer(mutating: service))
            g_hash_table_insert(table, UnsafeMutableRawPointer(mutating: accountKey), UnsafeMutableRawPointer(mutating: account))
            body()
          }
        }
      }
    }
  }
}

/// Runs the two loops interleaved, one operation of each at a time, so that both see the same
/// provider state (gnome-keyring slows down as it fills) and the same machine noise.
/// Returns operations per second for each.
func interleavedRates(_ count: Int, swift: (Int) throws -> Void, raw: (Int) -> Void) rethrows -> (swift: Double, raw: Double) {
  var swiftTime = Duration.zero
  var rawTime = Duration.zero
  let clock = ContinuousClock()
  for index in 0..<count {
    rawTime += clock.measure { raw(index) }
    swiftTime += try clock.measure { try swift(index) }
  }
  func perSecond(_ duration: Duration) -> Double {
    Double(count) / (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
  }
  return (perSecond(swiftTime), perSecond(rawTime))
}

func measure(_ provider: Provider) async throws {
  try await withProvider(provider) { instance in
    let raw = try RawLoop(address: instance.busAddress, busName: instance.busName)
    let client = instance.client()
    var best = (rawStore: 0.0, swiftStore: 0.0, rawLookup: 0.0, swiftLookup: 0.0)
    for _ in 0..<rounds {
      let stores = try interleavedRates(storeCount) {
        try client.write(SecretValue("secret-\($0)"), service: "bench-swift", account: "\($0)", label: "swift \($0)")
      } raw: { raw.store($0) }
      let lookups = try interleavedRates(lookupCount) {
        let value = try client.read(service: "bench-swift", account: "\($0 % storeCount)")
        precondition(value != nil)
      } raw: { raw.lookup($0) }
      best = (max(best.rawStore, stores.raw), max(best.swiftStore, stores.swift),
              max(best.rawLookup, lookups.raw), max(best.swiftLookup, lookups.swift))
    }
    g_object_unref(UnsafeMutableRawPointer(raw.service))
    print("SecretClient vs plain libsecret, against \(provider) (best of \(rounds) rounds):")
    print(String(format: "  stores/s:  SecretClient %8.0f   libsecret %8.0f   Swift layer costs %+.1f%%",
                 best.swiftStore, best.rawStore, (best.rawStore / best.swiftStore - 1) * 100))
    print(String(format: "  lookups/s: SecretClient %8.0f   libsecret %8.0f   Swift layer costs %+.1f%%",
                 best.swiftLookup, best.rawLookup, (best.rawLookup / best.swiftLookup - 1) * 100))
  }
}

for provider in Provider.all {
  try await measure(provider)
}
