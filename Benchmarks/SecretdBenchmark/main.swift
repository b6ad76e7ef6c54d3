// Benchmark: secretd against gnome-keyring, driven by the same libsecret C calls
// (secret_service_store_sync / secret_service_lookup_sync) on a SecretService opened on each
// provider's private bus. Like for like: secretd keeps everything in memory, so its peer is
// gnome-keyring's `session` collection, also in memory; gnome-keyring's `default` collection (the
// login keyring, rewritten on disk at every store) is printed beside it, labelled as disk.
//
// Each provider is filled to the stated number of items first; then, in rounds whose order
// rotates, each stores (replacing items it has, so the count stays put) and looks items up.
// Figures are medians of the rounds with their interquartile ranges; ratios are taken round by
// round. Also printed: where each lookup's time goes (the daemon's CPU, the client's CPU, the
// rest: the bus daemon and wake-ups) and each daemon's memory.
import BenchmarkSupport
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

  func store(_ index: Int, in collection: String) throws {
    let table = try attributes(index)
    defer { g_hash_table_unref(table) }
    let secret = "secret-value-\(index)"
    let value = secret.withCString { secret_value_new($0, -1, "text/plain") }
    defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
    var error: UnsafeMutablePointer<GError>?
    guard secret_service_store_sync(raw, nil, table, collection, "bench \(index)", value, nil, &error) != 0 else {
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

/// One provider and collection under test: its libsecret client and its figures per fill level.
final class Subject {
  let name: String
  let collection: String
  let instance: ProviderInstance
  let service: Service
  var stored = 0
  var storeRates: [Int: Samples] = [:]
  var lookupRates: [Int: Samples] = [:]
  /// CPU seconds per lookup, of the daemon and of this process (the libsecret client).
  var lookupCPU: [Int: (daemon: Samples, client: Samples)] = [:]
  var memory = (resident: 0, anonymous: 0)

  init(_ name: String, _ instance: ProviderInstance, collection: String) throws {
    self.name = name
    self.collection = collection
    self.instance = instance
    service = try Service(address: instance.busAddress, busName: instance.busName)
  }

  /// Adds items until there are `size`.
  func fill(to size: Int) throws {
    while stored < size {
      try service.store(stored, in: collection)
      stored += 1
    }
  }

  /// Replaces `count` of the items there are, spread over all of them.
  func measureStores(_ size: Int, count: Int, round: Int) throws {
    let wall = try seconds {
      for step in 0..<count { try service.store(spread(round, step, count, size), in: collection) }
    }
    storeRates[size, default: Samples()].append(Double(count) / wall)
  }

  func measureLookups(_ size: Int, count: Int, round: Int) throws {
    let (daemon, client) = (cpuSeconds(instance.pid), ownCPUSeconds())
    let wall = try seconds { for step in 0..<count { try service.lookup(spread(round, step, count, size)) } }
    lookupRates[size, default: Samples()].append(Double(count) / wall)
    var cpu = lookupCPU[size] ?? (Samples(), Samples())
    cpu.daemon.append((cpuSeconds(instance.pid) - daemon) / Double(count))
    cpu.client.append((ownCPUSeconds() - client) / Double(count))
    lookupCPU[size] = cpu
  }

  /// Item indexes that visit the whole collection, in an order that differs from round to round.
  private func spread(_ round: Int, _ step: Int, _ count: Int, _ size: Int) -> Int {
    ((round * count + step) * 7919) % size
  }
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

/// This process's CPU seconds (the libsecret client and its GDBus thread).
func ownCPUSeconds() -> Double {
  var usage = rusage()
  getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
  return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// `VmRSS` and `RssAnon` (resident, and the part not backed by files such as shared libraries), KiB.
func memoryKiB(_ pid: Int32) -> (resident: Int, anonymous: Int) {
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return (0, 0) }
  func field(_ name: String) -> Int {
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
  }
  return (field("VmRSS"), field("RssAnon"))
}

let sizes = [300, 1300]
let rounds = 7
let storesPerRound = 40
let lookupsPerRound = 300

print("secretd vs gnome-keyring: libsecret secret_service_store_sync / secret_service_lookup_sync, one client;")
print("stores replace items (the count stays at the fill level); \(rounds) rounds of \(storesPerRound) stores and")
print("\(lookupsPerRound) lookups per side, order rotating; medians with interquartile ranges")

/// The three sides, each provider on a bus of its own, all up at once.
func compare() async throws {
  try await withProvider(.secretd) { secretd in
    try await withProvider(.gnomeKeyring) { keyringSession in
      try await withProvider(.gnomeKeyring) { keyringLogin in
        let subjects = [
          try Subject("secretd (memory)", secretd, collection: "default"),
          try Subject("gnome-keyring session (memory)", keyringSession, collection: "session"),
          try Subject("gnome-keyring login (disk)", keyringLogin, collection: "default"),
        ]
        for size in sizes {
          for subject in subjects { try subject.fill(to: size) }
          try alternating(rounds: rounds, sides: subjects.count) { round, side in
            try subjects[side].measureStores(size, count: storesPerRound, round: round)
          }
          try alternating(rounds: rounds, sides: subjects.count) { round, side in
            try subjects[side].measureLookups(size, count: lookupsPerRound, round: round)
          }
        }
        for subject in subjects { subject.memory = memoryKiB(subject.instance.pid) }
        report(subjects)
      }
    }
  }
}

try await compare()

/// The tables (rates, and secretd's advantage round by round), the time per lookup, memory.
func report(_ subjects: [Subject]) {
  let secretd = subjects[0]
  for size in sizes {
    print("")
    print("At \(size) items:")
    print("| | stores/s | secretd is × faster | lookups/s | secretd is × faster |")
    print("|---|---|---|---|---|")
    for subject in subjects {
      let stores = subject.storeRates[size] ?? Samples()
      let lookups = subject.lookupRates[size] ?? Samples()
      let isSecretd = subject === secretd
      let storeRatio = isSecretd ? "" : Samples.ratios(secretd.storeRates[size] ?? Samples(), stores).formatted(1)
      let lookupRatio = isSecretd ? "" : Samples.ratios(secretd.lookupRates[size] ?? Samples(), lookups).formatted(1)
      print("| \(subject.name) | \(stores) | \(storeRatio) | \(lookups) | \(lookupRatio) |")
    }
    for subject in subjects {
      let wall = 1e6 / max((subject.lookupRates[size] ?? Samples()).median, 1)
      let daemon = (subject.lookupCPU[size]?.daemon.median ?? 0) * 1e6
      let client = (subject.lookupCPU[size]?.client.median ?? 0) * 1e6
      print(
        "  \(subject.name): a lookup takes \(Int(wall)) µs = daemon CPU \(Int(daemon)) + client CPU \(Int(client)) "
          + "+ rest \(Int(max(0, wall - daemon - client))) (bus daemon, wake-ups)")
    }
  }
  print("")
  for subject in subjects {
    print(
      "memory after \(sizes.last ?? 0) items: \(subject.name) \(subject.memory.resident) KiB resident "
        + "(\(subject.memory.anonymous) KiB private)")
  }
  let flatStore = (secretd.storeRates[1300]?.median ?? 0) / max(secretd.storeRates[300]?.median ?? 1, 1)
  let flatLookup = (secretd.lookupRates[1300]?.median ?? 0) / max(secretd.lookupRates[300]?.median ?? 1, 1)
  print(
    String(format: "secretd flatness (rate at 1,300 / rate at 300): stores %.2f, lookups %.2f", flatStore, flatLookup))
}
