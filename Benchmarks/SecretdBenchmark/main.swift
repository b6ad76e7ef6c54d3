// Benchmark: secretd against gnome-keyring, each on its own private bus, driven by the same
// libsecret C calls (secret_service_store_sync / secret_service_lookup_sync) on a SecretService
// opened on that bus. Both providers run at once and are measured in alternation, round by round,
// so load from elsewhere on the machine hits both alike; rates are medians of the rounds.
// Prints stores/s and lookups/s at 300 and 1,300 items, where each lookup's time goes (the
// daemon's CPU, the client's CPU, the rest: the bus daemon and wake-ups), each daemon's memory
// (resident, and the private part of it), and the ratios.
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

/// One provider under test: its libsecret client and where it has got to.
final class Subject {
  let name: String
  let instance: ProviderInstance
  let service: Service
  var stored = 0
  var storeRates: [Int: [Double]] = [:]
  var lookupRates: [Int: [Double]] = [:]
  var daemonSeconds: [Int: (store: Double, lookup: Double)] = [:]
  var clientSeconds: [Int: (store: Double, lookup: Double)] = [:]
  var operations: [Int: (store: Int, lookup: Int)] = [:]
  var memory = (resident: 0, anonymous: 0)

  init(_ instance: ProviderInstance) throws {
    name = instance.provider.description
    self.instance = instance
    service = try Service(address: instance.busAddress, busName: instance.busName)
    try service.store(-1)  // warm up: the first store may create the default collection
  }

  /// Runs `body`, adding its wall rate, the daemon's CPU and our own CPU to the figures of `size`.
  func timed(_ size: Int, lookup: Bool, count: Int, _ body: () throws -> Void) rethrows {
    let (daemon, client) = (cpuSeconds(instance.pid), ownCPUSeconds())
    let wall = try seconds(body)
    let daemonUsed = cpuSeconds(instance.pid) - daemon
    let clientUsed = ownCPUSeconds() - client
    var d = daemonSeconds[size] ?? (0, 0)
    var c = clientSeconds[size] ?? (0, 0)
    var n = operations[size] ?? (0, 0)
    if lookup {
      lookupRates[size, default: []].append(Double(count) / wall)
      d.lookup += daemonUsed
      c.lookup += clientUsed
      n.lookup += count
    } else {
      storeRates[size, default: []].append(Double(count) / wall)
      d.store += daemonUsed
      c.store += clientUsed
      n.store += count
    }
    (daemonSeconds[size], clientSeconds[size], operations[size]) = (d, c, n)
  }

  func storeRate(_ size: Int) -> Double { median(storeRates[size] ?? []) }
  func lookupRate(_ size: Int) -> Double { median(lookupRates[size] ?? []) }
  func micros(_ seconds: Double, _ count: Int) -> Double { count > 0 ? seconds * 1e6 / Double(count) : 0 }
}

func median(_ values: [Double]) -> Double {
  guard !values.isEmpty else { return 0 }
  let sorted = values.sorted()
  return sorted[sorted.count / 2]
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

func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let sizes = [300, 1300]
/// Stores go in chunks of this many per provider, alternating; lookups in rounds of this many.
let storeChunk = 50
let lookupRounds = 7
let lookupsPerRound = 400

print("secretd vs gnome-keyring: libsecret secret_service_store_sync / secret_service_lookup_sync, one client,")
print("both providers up at once, measured in alternation (stores in chunks of \(storeChunk), lookups in \(lookupRounds) rounds of \(lookupsPerRound)); rates are medians")
/// Both providers at once, measured in alternation.
func compare() async throws {
  try await withProvider(.secretd) { secretdInstance in
    try await withProvider(.gnomeKeyring) { keyringInstance in
      let subjects = [try Subject(secretdInstance), try Subject(keyringInstance)]
      for size in sizes {
        while subjects.contains(where: { $0.stored < size }) {
          for subject in subjects where subject.stored < size {
            let range = subject.stored..<min(size, subject.stored + storeChunk)
            try subject.timed(size, lookup: false, count: range.count) { for index in range { try subject.service.store(index) } }
            subject.stored = range.upperBound
          }
        }
        for round in 0..<lookupRounds {
          // Alternate which provider goes first, so neither always follows the other.
          for subject in round.isMultiple(of: 2) ? subjects : subjects.reversed() {
            try subject.timed(size, lookup: true, count: lookupsPerRound) {
              for step in 0..<lookupsPerRound { try subject.service.lookup(((round * lookupsPerRound + step) * 7919) % size) }
            }
          }
        }
        for subject in subjects {
          let d = subject.daemonSeconds[size] ?? (0, 0)
          let c = subject.clientSeconds[size] ?? (0, 0)
          let n = subject.operations[size] ?? (0, 0)
          let wallLookup = 1e6 / max(subject.lookupRate(size), 1)
          let daemonLookup = subject.micros(d.lookup, n.lookup)
          let clientLookup = subject.micros(c.lookup, n.lookup)
          print(
            "  \(subject.name) at \(size) items: \(Int(subject.storeRate(size))) stores/s, \(Int(subject.lookupRate(size))) lookups/s; "
              + "per store: daemon CPU \(Int(subject.micros(d.store, n.store))) µs, client CPU \(Int(subject.micros(c.store, n.store))) µs; "
              + "per lookup: \(Int(wallLookup)) µs = daemon CPU \(Int(daemonLookup)) + client CPU \(Int(clientLookup)) "
              + "+ rest \(Int(max(0, wallLookup - daemonLookup - clientLookup))) (bus daemon, wake-ups)")
        }
      }
      for subject in subjects { subject.memory = memoryKiB(subject.instance.pid) }
      report(secretd: subjects[0], keyring: subjects[1])
    }
  }
}

try await compare()

func format(_ value: Double) -> String { String(format: "%.0f", value) }
func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.1fx", a / b) : "n/a" }

/// The table, memory and flatness lines.
func report(secretd: Subject, keyring: Subject) {
  print("")
  print("| items | secretd stores/s | gnome-keyring stores/s | ratio | secretd lookups/s | gnome-keyring lookups/s | ratio |")
  print("|---|---|---|---|---|---|---|")
  for size in sizes {
    let (ss, ks) = (secretd.storeRate(size), keyring.storeRate(size))
    let (sl, kl) = (secretd.lookupRate(size), keyring.lookupRate(size))
    print("| \(size) | \(format(ss)) | \(format(ks)) | \(ratio(ss, ks)) | \(format(sl)) | \(format(kl)) | \(ratio(sl, kl)) |")
  }
  print("")
  print(
    "memory after 1,300 items: secretd \(secretd.memory.resident) KiB resident (\(secretd.memory.anonymous) KiB private), "
      + "gnome-keyring \(keyring.memory.resident) KiB (\(keyring.memory.anonymous) KiB private); "
      + "resident \(ratio(Double(keyring.memory.resident), Double(secretd.memory.resident))) smaller, "
      + "private \(ratio(Double(keyring.memory.anonymous), Double(secretd.memory.anonymous))) smaller")
  let flatStore = secretd.storeRate(1300) / max(secretd.storeRate(300), 1)
  let flatLookup = secretd.lookupRate(1300) / max(secretd.lookupRate(300), 1)
  print("secretd flatness (rate at 1,300 / rate at 300): stores \(String(format: "%.2f", flatStore)), lookups \(String(format: "%.2f", flatLookup))")
}
