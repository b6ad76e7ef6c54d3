// Benchmark: how long secretd takes from exec to serving when the service manager hands it back
// a store of 10,000 items (after a crash, an OOM kill or `systemctl --user restart`), beside the
// same secretd starting empty, and the secretd of the previous build (SECRETD_BASELINE) starting
// empty, as every start did before the store outlived the process. Then each one's memory while
// it holds the 10,000 items.
//
// This process is the service manager: it keeps the descriptor secretd sends with FDSTORE=1 and
// passes it back as LISTEN_FDS/LISTEN_FDNAMES=store, exactly as systemd does. A start is timed
// from the spawn to the bus's NameOwnerChanged that gives secretd its name (secretd takes its
// name once the store is checked and ready); each start ends with SIGKILL. Sides alternate round
// by round. Once timed, every one of the 10,000 items is read back from the last inherited start.
import BenchmarkSupport
import CLibSecret
import Foundation
import ProviderBenchmarkSupport
import SecretTestSupport

let itemCount = 10_000
let rounds = 11
let busName = "org.freedesktop.secrets"

/// The bus's NameOwnerChanged for `busName`, heard on a main context of this thread's own.
final class NameWatch {
  let context: OpaquePointer
  let connection: OpaquePointer
  private(set) var owner = ""

  init(address: String) throws {
    guard let context = g_main_context_new() else { throw BenchmarkError("g_main_context_new failed") }
    self.context = context
    g_main_context_push_thread_default(context)
    defer { g_main_context_pop_thread_default(context) }
    connection = try connect(address)
    _ = g_dbus_connection_signal_subscribe(
      connection, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus",
      busName, G_DBUS_SIGNAL_FLAGS_NONE,
      { _, _, _, _, _, parameters, watch in
        guard let parameters, let watch, let owner = g_variant_get_child_value(parameters, 2) else { return }
        defer { g_variant_unref(owner) }
        Unmanaged<NameWatch>.fromOpaque(watch).takeUnretainedValue().owner = String(
          cString: g_variant_get_string(owner, nil))
      }, Unmanaged.passUnretained(self).toOpaque(), nil)
    // A round trip after AddMatch: the bus has the match rule before any secretd starts.
    var error: UnsafeMutablePointer<GError>?
    guard
      let reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", nil, nil,
        G_DBUS_CALL_FLAGS_NONE, 5_000, nil, &error)
    else { throw BenchmarkError("GetId: \(message(error))") }
    g_variant_unref(reply)
  }

  /// Waits until the name is owned (or free), at most 20 seconds.
  func wait(owned: Bool) throws {
    var timedOut = false
    let timeout = g_timeout_source_new(20_000)
    defer {
      g_source_destroy(timeout)
      g_source_unref(timeout)
    }
    withUnsafeMutablePointer(to: &timedOut) { flag in
      g_source_set_callback(
        timeout,
        { flag in
          flag?.assumingMemoryBound(to: Bool.self).pointee = true
          return 0
        }, flag, nil)
      g_source_attach(timeout, context)
      while owner.isEmpty == owned && !flag.pointee { g_main_context_iteration(context, 1) }
    }
    if timedOut { throw BenchmarkError("\(busName) was not \(owned ? "taken" : "let go") within 20 s") }
  }
}

/// Starts secretd on `bus` as a service manager would, handing it `store` when given.
func startSecretd(
  _ executable: URL, on bus: PrivateBus, notifying manager: NotifySocket, handing store: Int32?
) throws -> ChildProcess {
  var environment = [
    "HOME": bus.directory.path, "XDG_RUNTIME_DIR": bus.directory.path, "PATH": "/usr/bin:/bin",
    "NOTIFY_SOCKET": manager.path,
  ]
  if store != nil { (environment["LISTEN_FDS"], environment["LISTEN_FDNAMES"]) = ("1", "store") }
  let log = open(bus.directory.appending(path: "secretd.log").path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
  let null = open("/dev/null", O_RDWR | O_CLOEXEC)
  defer { [log, null].forEach { close($0) } }
  // LISTEN_PID names the process that execs secretd, as systemd sets it between fork and exec.
  return try ChildProcess(
    URL(filePath: "/bin/sh"),
    ["-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"", executable.path, "--address", bus.address, "--bus-name", busName],
    environment: environment, stdin: null, stdout: null, stderr: log, inheriting: store.map { [$0] } ?? [])
}

/// One way of starting: its binary, the store it is handed, and its times.
struct Side {
  let name: String
  let executable: URL
  let manager: NotifySocket
  let handsStore: Bool
  var startup = Samples()
}

/// Starts and kills `side` once, timing the start.
func timedStart(_ side: inout Side, on bus: PrivateBus, watch: NameWatch) throws {
  let store = side.handsStore ? side.manager.stored("store") : nil
  if side.handsStore && store == nil { throw BenchmarkError("the service manager holds no store") }
  let elapsed = try seconds {
    let secretd = try startSecretd(side.executable, on: bus, notifying: side.manager, handing: store)
    defer {
      secretd.signal(SIGKILL)
      secretd.wait()
    }
    try watch.wait(owned: true)
  }
  try watch.wait(owned: false)
  side.startup.append(elapsed * 1e3)
}

/// Starts `executable`, stores `itemCount` items through libsecret, and returns it running.
func filled(_ executable: URL, on bus: PrivateBus, manager: NotifySocket, watch: NameWatch) throws -> ChildProcess {
  let secretd = try startSecretd(executable, on: bus, notifying: manager, handing: nil)
  try watch.wait(owned: true)
  let service = try LibSecretService(address: bus.address, busName: busName)
  for index in 0..<itemCount { try service.store(index, in: "default") }
  return secretd
}

func stop(_ secretd: ChildProcess, watch: NameWatch) throws {
  secretd.signal(SIGKILL)
  secretd.wait()
  try watch.wait(owned: false)
}

let bus = try PrivateBus()
defer { bus.stop() }
let watch = try NameWatch(address: bus.address)
let current = try builtExecutable("secretd")
let baseline = ProcessInfo.processInfo.environment["SECRETD_BASELINE"].map { URL(filePath: $0) }
let baselineName = ProcessInfo.processInfo.environment["SECRETD_BASELINE_NAME"] ?? "baseline"

print("secretd from exec to owning its name on the bus, the store handed back by the service manager or none;")
print("\(rounds) starts per side, sides alternating, each ended by SIGKILL; medians with interquartile ranges")

let keeper = try NotifySocket(in: try makeTemporaryDirectory())
var memory: [(String, ResidentMemory)] = []
let first = try filled(current, on: bus, manager: keeper, watch: watch)
memory.append(("secretd, \(itemCount) items stored by a client", ResidentMemory(of: first.pid)))
try stop(first, watch: watch)

var sides = [
  Side(name: "secretd handed \(itemCount) items", executable: current, manager: keeper, handsStore: true),
  Side(
    name: "secretd, empty", executable: current, manager: try NotifySocket(in: try makeTemporaryDirectory()),
    handsStore: false),
]
if let baseline {
  sides.append(
    Side(
      name: "secretd \(baselineName), empty (its store died with it)", executable: baseline,
      manager: try NotifySocket(in: try makeTemporaryDirectory()), handsStore: false))
} else {
  print("(no earlier secretd to compare with: SECRETD_BASELINE is not set)")
}
try alternating(rounds: rounds, sides: sides.count) { _, side in try timedStart(&sides[side], on: bus, watch: watch) }

print("")
print("| start | ms to serving | × empty start |")
print("|---|---|---|")
for side in sides {
  print(
    "| \(side.name) | \(side.startup.formatted(1)) | \(Samples.ratios(side.startup, sides[1].startup).formatted(2)) |")
}

// The last handed-back start serves every item, each with its own secret.
let served = try startSecretd(current, on: bus, notifying: keeper, handing: keeper.stored("store"))
try watch.wait(owned: true)
let client = try LibSecretService(address: bus.address, busName: busName)
let readBack = try seconds { for index in 0..<itemCount { try client.lookup(index) } }
print("")
print(
  String(
    format: "after the last start from the handed-back store: all %d items read back (%.1f s)", itemCount, readBack))
memory.append(("secretd, started from the \(itemCount) items handed back", ResidentMemory(of: served.pid)))
try stop(served, watch: watch)
if let baseline {
  let earlier = try filled(baseline, on: bus, manager: try NotifySocket(in: try makeTemporaryDirectory()), watch: watch)
  memory.append(("secretd \(baselineName), \(itemCount) items stored by a client", ResidentMemory(of: earlier.pid)))
  try stop(earlier, watch: watch)
}
print("")
for (name, figures) in memory { print("memory: \(name): \(figures)") }
