// Benchmark: is a provider fair to an honest client while others flood it? Two scenes:
//
// 1. secretd, and gnome-keyring doing the same work on the same kind of collection (session:
//    memory only), with 5,000 items; two flooders, each on its own connection, keep `inFlight`
//    calls outstanding at all times: one asks SearchItems({}) (every item's path), the other
//    GetSecrets over `pathsPerGetSecrets` items through a plain session.
// 2. 100,000 items, and one flooder listing them all (SearchItems({}), `inFlight` at a time):
//    secretd against its previous build (SECRETD_BASELINE), which answered such calls on the
//    thread that reads the bus. gnome-keyring is left out: filling it with 100,000 items takes
//    hours (it slows with every item).
//
// The honest client runs libsecret lookups (secret_service_lookup_sync, one at a time) and times
// each. Rounds alternate idle and flood phases (which goes first alternates too); each phase
// gives the median latency of its lookups. Flooders are processes of their own (in one process
// they would share GDBus's reader thread with the honest client). Printed: medians over the
// rounds, their spread (lowest and highest round), and the ratio flood / idle; secretd's target
// is 5x.
import CGio
import CLibSecret
import Foundation
import SecretTestSupport

/// The items of scene 1 and of scene 2.
let fewItems = 5_000
let manyItems = 100_000
let pathsPerGetSecrets = 1_000
let inFlight = 4
let rounds = 7
let lookupsPerPhase = 150
/// A phase also ends after this long: a provider that serves one lookup a second under flood
/// has made its point.
let phaseSeconds = 10.0

struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
}

func message(_ error: UnsafeMutablePointer<GError>?) -> String {
  guard let error else { return "unknown error" }
  defer { g_error_free(error) }
  return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
}

func connect(_ address: String) throws -> OpaquePointer {
  var error: UnsafeMutablePointer<GError>?
  let flags = GDBusConnectionFlags(
    G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
  guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
    throw BenchmarkError(description: "connect: \(message(error))")
  }
  return connection
}

// MARK: GVariant builders (enough for these calls)

func stringDictionary(_ pairs: [String: String]) -> OpaquePointer {
  let entries: [OpaquePointer?] = pairs.sorted { $0.key < $1.key }.map {
    g_variant_new_dict_entry(g_variant_new_string($0.key), g_variant_new_string($0.value))
  }
  return "{ss}".withCString { g_variant_new_array(cgio_variant_type($0), entries, gsize(entries.count)) }
}

func objectPaths(_ paths: [String]) -> OpaquePointer {
  let children: [OpaquePointer?] = paths.map { g_variant_new_object_path($0) }
  return "o".withCString { g_variant_new_array(cgio_variant_type($0), children, gsize(children.count)) }
}

func tuple(_ children: [OpaquePointer?]) -> OpaquePointer {
  g_variant_new_tuple(children, gsize(children.count))
}

func bytes(_ value: [UInt8]) -> OpaquePointer {
  value.withUnsafeBytes { raw in
    "y".withCString { g_variant_new_fixed_array(cgio_variant_type($0), raw.baseAddress, gsize(raw.count), 1) }
  }
}

let root = "/org/freedesktop/secrets"

func callSync(_ connection: OpaquePointer, _ path: String, _ interface: String, _ method: String, _ body: OpaquePointer)
  throws -> OpaquePointer
{
  var error: UnsafeMutablePointer<GError>?
  guard
    let reply = g_dbus_connection_call_sync(
      connection, "org.freedesktop.secrets", path, interface, method, body, nil, G_DBUS_CALL_FLAGS_NONE, 60_000, nil,
      &error)
  else { throw BenchmarkError(description: "\(method): \(message(error))") }
  return reply
}

/// Fills the store with `itemCount` items through a plain session and returns every item's path.
func fill(_ address: String, itemCount: Int) throws -> [String] {
  let connection = try connect(address)
  defer { g_object_unref(UnsafeMutableRawPointer(connection)) }
  let opened = try callSync(
    connection, root, "org.freedesktop.Secret.Service", "OpenSession",
    tuple([g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))]))
  defer { g_variant_unref(opened) }
  let session = String(cString: g_variant_get_string(g_variant_get_child_value(opened, 1), nil))
  var paths: [String] = []
  for index in 0..<itemCount {
    let entries: [OpaquePointer?] = [
      g_variant_new_dict_entry(
        g_variant_new_string("org.freedesktop.Secret.Item.Attributes"),
        g_variant_new_variant(stringDictionary(["service": "fairness.example", "account": "user-\(index)"]))),
      g_variant_new_dict_entry(
        g_variant_new_string("org.freedesktop.Secret.Item.Label"),
        g_variant_new_variant(g_variant_new_string("item \(index)"))),
    ]
    let properties = "{sv}".withCString { g_variant_new_array(cgio_variant_type($0), entries, 2) }
    let secret = tuple([
      g_variant_new_object_path(session), bytes([]),
      bytes(Array("secret-value-\(index)-".utf8) + [UInt8](repeating: 0x41, count: 40)),
      g_variant_new_string("text/plain"),
    ])
    let reply = try callSync(
      connection, root + "/aliases/session", "org.freedesktop.Secret.Collection", "CreateItem",
      tuple([properties, secret, g_variant_new_boolean(1)]))
    paths.append(String(cString: g_variant_get_string(g_variant_get_child_value(reply, 0), nil)))
    g_variant_unref(reply)
  }
  return paths
}

// MARK: Flooders

/// Keeps `inFlight` calls of one kind outstanding on `connection`, forever: the flooder process's
/// whole life. Prints "ready" once the first answer arrives.
final class Flooder {
  let connection: OpaquePointer
  let makeCall: () -> (path: String, interface: String, method: String, body: OpaquePointer)
  var answered = 0

  init(connection: OpaquePointer, makeCall: @escaping () -> (String, String, String, OpaquePointer)) {
    self.connection = connection
    self.makeCall = makeCall
  }

  func run() -> Never {
    for _ in 0..<inFlight { issue() }
    while true { g_main_context_iteration(nil, 1) }
  }

  func issue() {
    let call = makeCall()
    g_dbus_connection_call(
      connection, "org.freedesktop.secrets", call.path, call.interface, call.method, call.body, nil,
      G_DBUS_CALL_FLAGS_NONE, 60_000, nil,
      { source, result, userData in
        guard let userData else { return }
        let flooder = Unmanaged<Flooder>.fromOpaque(userData).takeUnretainedValue()
        var error: UnsafeMutablePointer<GError>?
        if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
          g_variant_unref(reply)
        } else {
          FileHandle.standardError.write(Data("flooder: \(message(error))\n".utf8))
        }
        flooder.answered += 1
        if flooder.answered == 1 { FileHandle.standardOutput.write(Data("ready\n".utf8)) }
        flooder.issue()
      }, Unmanaged.passUnretained(self).toOpaque())
  }
}

/// The flooder process: `flood search|secrets ADDRESS`.
func flood(kind: String, address: String) throws -> Never {
  let connection = try connect(address)
  switch kind {
  case "search":
    Flooder(connection: connection) {
      (root, "org.freedesktop.Secret.Service", "SearchItems", tuple([stringDictionary([:])]))
    }.run()
  default:
    let opened = try callSync(
      connection, root, "org.freedesktop.Secret.Service", "OpenSession",
      tuple([g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))]))
    let session = String(cString: g_variant_get_string(g_variant_get_child_value(opened, 1), nil))
    let found = try callSync(
      connection, root, "org.freedesktop.Secret.Service", "SearchItems", tuple([stringDictionary([:])]))
    let all = g_variant_get_child_value(found, 0)!
    let paths = (0..<Int(g_variant_n_children(all))).map {
      String(cString: g_variant_get_string(g_variant_get_child_value(all, gsize($0)), nil))
    }
    Flooder(connection: connection) {
      let start = Int.random(in: 0...(paths.count - pathsPerGetSecrets))
      return (
        root, "org.freedesktop.Secret.Service", "GetSecrets",
        tuple([objectPaths(Array(paths[start..<start + pathsPerGetSecrets])), g_variant_new_object_path(session)])
      )
    }.run()
  }
}

/// Starts a flooder process and waits until it floods.
func startFlooder(_ kind: String, address: String, in folder: URL) throws -> ChildProcess {
  let output = try ChildProcess.makePipe()
  let null = open("/dev/null", O_RDWR | O_CLOEXEC)
  defer { close(null) }
  let child = try ChildProcess(
    try builtExecutable("SecretdFairnessBenchmark"), ["flood", kind, address], environment: [:],
    stdin: null, stdout: output.write, stderr: 2)
  close(output.write)
  var byte: UInt8 = 0
  _ = read(output.read, &byte, 1)
  close(output.read)
  return child
}

// MARK: The honest client

final class HonestClient {
  let connection: OpaquePointer
  let service: UnsafeMutablePointer<SecretService>

  init(address: String) throws {
    connection = try connect(address)
    var error: UnsafeMutablePointer<GError>?
    guard let service = clibsecret_service_new(connection, "org.freedesktop.secrets", &error) else {
      throw BenchmarkError(description: "open SecretService: \(message(error))")
    }
    self.service = service
  }

  /// Seconds one lookup of item `index` takes.
  func lookup(_ index: Int) throws -> Double {
    guard let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) else {
      throw BenchmarkError(description: "g_hash_table_new_full failed")
    }
    defer { g_hash_table_unref(table) }
    g_hash_table_insert(table, g_strdup("service"), g_strdup("fairness.example"))
    g_hash_table_insert(table, g_strdup("account"), g_strdup("user-\(index)"))
    let start = DispatchTime.now().uptimeNanoseconds
    var error: UnsafeMutablePointer<GError>?
    guard let value = secret_service_lookup_sync(service, nil, table, nil, &error) else {
      throw BenchmarkError(description: "lookup \(index): \(error == nil ? "not found" : message(error))")
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    secret_value_unref(UnsafeMutableRawPointer(value))
    return elapsed
  }
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }

/// Prints a line at once, even into a pipe.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "flood" {
  try flood(kind: CommandLine.arguments[2], address: CommandLine.arguments[3])
}

/// The honest client's median lookup latency per round, idle and while `flooders` run.
func measure(_ instance: ProviderInstance, itemCount: Int, flooders kinds: [String]) throws -> (
  idle: [Double], flood: [Double]
) {
  _ = try fill(instance.busAddress, itemCount: itemCount)
  let honest = try HonestClient(address: instance.busAddress)
  var idle: [Double] = []
  var flood: [Double] = []
  for index in 0..<200 { _ = try honest.lookup(index) }  // warm up
  for round in 0..<rounds {
    for flooding in round.isMultiple(of: 2) ? [false, true] : [true, false] {
      let flooders =
        flooding
        ? try kinds.map { try startFlooder($0, address: instance.busAddress, in: instance.bus.directory) } : []
      defer {
        for flooder in flooders {
          flooder.signal(SIGKILL)
          flooder.wait()
        }
      }
      var latencies: [Double] = []
      for step in 0..<lookupsPerPhase where latencies.reduce(0, +) < phaseSeconds {
        latencies.append(try honest.lookup((round * 7919 + step * 31) % itemCount))
      }
      if flooding { flood.append(median(latencies)) } else { idle.append(median(latencies)) }
    }
  }
  return (idle, flood)
}

func report(_ name: String, _ phases: (idle: [Double], flood: [Double]), target: Bool) {
  let (idle, flood) = phases
  let ratio = median(flood) / median(idle)
  say(
    "\(name): idle \(milliseconds(median(idle))) (rounds \(milliseconds(idle.min() ?? 0))–\(milliseconds(idle.max() ?? 0))), "
      + "under flood \(milliseconds(median(flood))) (rounds \(milliseconds(flood.min() ?? 0))–\(milliseconds(flood.max() ?? 0))); "
      + "flood / idle = \(String(format: "%.1fx", ratio))\(target ? " (target <= 5x)" : "")")
}

say("Fairness: an honest client's libsecret lookups, idle and while other processes flood the provider")
say(
  "1. \(fewItems) items in the session collection; two flooders, each keeping \(inFlight) calls in flight: "
    + "SearchItems({}) and GetSecrets of \(pathsPerGetSecrets) paths; \(rounds) rounds of \(lookupsPerPhase) lookups "
    + "or \(Int(phaseSeconds)) s per phase, phases alternating")
let baseline = ProcessInfo.processInfo.environment["SECRETD_BASELINE"].map { URL(filePath: $0) }
let baselineName = ProcessInfo.processInfo.environment["SECRETD_BASELINE_NAME"] ?? "baseline"
for provider in Provider.all {
  try await withProvider(provider) { instance in
    report(
      "\(provider)", try measure(instance, itemCount: fewItems, flooders: ["search", "secrets"]),
      target: provider == .secretd)
  }
}
if let baseline {
  try await withProvider(.secretd, secretd: baseline) { instance in
    report(
      "secretd \(baselineName)", try measure(instance, itemCount: fewItems, flooders: ["search", "secrets"]),
      target: false)
  }
}

say("")
say(
  "2. \(manyItems) items; one flooder keeping \(inFlight) SearchItems({}) in flight, each listing every item; "
    + "secretd against its previous build, whose reading thread answered such calls itself")
// 100,000 items take more than the budget 8 MiB of locked memory gives (a user's default): a
// budget of 64 MiB for both sides, locked where this process may lock that much.
let manyItemsArguments = ["--max-memory", "64M", "--allow-unlocked-memory"]
try await withProvider(.secretd, arguments: manyItemsArguments) { instance in
  report("secretd", try measure(instance, itemCount: manyItems, flooders: ["search"]), target: true)
}
if let baseline {
  try await withProvider(.secretd, arguments: manyItemsArguments, secretd: baseline) { instance in
    report(
      "secretd \(baselineName)", try measure(instance, itemCount: manyItems, flooders: ["search"]), target: false)
  }
} else {
  say("(no earlier secretd to compare with: SECRETD_BASELINE is not set)")
}
