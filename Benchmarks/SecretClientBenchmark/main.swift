// Stores and lookups per second through SecretClient and through a plain libsecret loop
// (`secret_service_store_sync` / `secret_service_lookup_sync` on a libsecret service object),
// against the same provider on a private bus, in one run. The two sides alternate call by call,
// so both see the same provider state and the same machine noise; each round gives a rate per
// side, and the figures are the medians of the rounds with their interquartile ranges.
// Prints the cost of the Swift layer.
import BenchmarkSupport
import CLibSecret
import Foundation
import SecretClient
import SecretTestSupport

let storeCount = 300
let lookupCount = 1_000
let rounds = 7

/// The plain C loop: what a C program using libsecret's service API does.
struct RawLoop {
  let service: UnsafeMutablePointer<CLibSecret.SecretService>

  /// libsecret's service object on a connection of its own to `address` (the process-wide
  /// session bus cannot follow the benchmark from one private bus to the next).
  init(address: String, busName: String) throws {
    var error: UnsafeMutablePointer<GError>?
    let flags = GDBusConnectionFlags(
      rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
        | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error),
      let service = clibsecret_service_new(connection, busName, &error)
    else {
      throw HarnessError(
        "libsecret could not open the service: \(error.map { String(cString: $0.pointee.message) } ?? "?")")
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
      guard let value = secret_service_lookup_sync(service, nil, attributes, nil, nil) else {
        fatalError("raw lookup missed")
      }
      secret_value_unref(UnsafeMutableRawPointer(value))
    }
  }

  private func withAttributes(_ index: Int, table: OpaquePointer?, _ body: () -> Void) {
    "bench-raw".withCString { service in
      "\(index % storeCount)".withCString { account in
        "service".withCString { serviceKey in
          "account".withCString { accountKey in
            g_hash_table_insert(
              table, UnsafeMutableRawPointer(mutating: serviceKey), UnsafeMutableRawPointer(mutating: service))
            g_hash_table_insert(
              table, UnsafeMutableRawPointer(mutating: accountKey), UnsafeMutableRawPointer(mutating: account))
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
func interleavedRates(_ count: Int, swift: (Int) throws -> Void, raw: (Int) -> Void) rethrows -> (
  swift: Double, raw: Double
) {
  var swiftTime = Duration.zero
  var rawTime = Duration.zero
  let clock = ContinuousClock()
  for index in 0..<count {
    // Which side goes first alternates, so neither always runs on a warmer provider.
    if index.isMultiple(of: 2) {
      rawTime += clock.measure { raw(index) }
      swiftTime += try clock.measure { try swift(index) }
    } else {
      swiftTime += try clock.measure { try swift(index) }
      rawTime += clock.measure { raw(index) }
    }
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
    var rates = (rawStore: Samples(), swiftStore: Samples(), rawLookup: Samples(), swiftLookup: Samples())
    for _ in 0..<rounds {
      let stores = try interleavedRates(storeCount) {
        try client.write(SecretValue("secret-\($0)"), service: "bench-swift", account: "\($0)", label: "swift \($0)")
      } raw: {
        raw.store($0)
      }
      let lookups = try interleavedRates(lookupCount) {
        let value = try client.read(service: "bench-swift", account: "\($0 % storeCount)")
        precondition(value != nil)
      } raw: {
        raw.lookup($0)
      }
      rates.rawStore.append(stores.raw)
      rates.swiftStore.append(stores.swift)
      rates.rawLookup.append(lookups.raw)
      rates.swiftLookup.append(lookups.swift)
    }
    g_object_unref(UnsafeMutableRawPointer(raw.service))
    /// The Swift layer's cost in percent, round by round.
    func cost(_ raw: Samples, _ swift: Samples) -> String {
      Samples(Samples.ratios(raw, swift).values.map { ($0 - 1) * 100 }).formatted(1) + "%"
    }
    print(
      "SecretClient vs plain libsecret, against \(provider) (\(rounds) rounds, \(storeCount) stores and \(lookupCount) lookups a side each):"
    )
    print("  stores/s:  SecretClient \(rates.swiftStore)   libsecret \(rates.rawStore)")
    print("             the Swift layer costs \(cost(rates.rawStore, rates.swiftStore))")
    print("  lookups/s: SecretClient \(rates.swiftLookup)   libsecret \(rates.rawLookup)")
    print("             the Swift layer costs \(cost(rates.rawLookup, rates.swiftLookup))")
  }
}

for provider in Provider.all {
  try await measure(provider)
}
