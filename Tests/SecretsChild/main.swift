// A process for the whole-process tests of SecretKey. It changes a secret to "first" (written at
// once; it waits for that write), then to VALUE, which waits in the 600 s write window; it says
// "pending" on stdout, then:
//   secrets-child wait      SERVICE ACCOUNT VALUE   waits for a signal (SIGTERM, SIGINT)
//   secrets-child exit      SERVICE ACCOUNT VALUE   returns from main: a normal exit
//   secrets-child in-memory SERVICE ACCOUNT VALUE   (in a test environment: in-memory storage)
//                                                   also saves, reads back, says "done", exits
//   secrets-child allocations SERVICE ACCOUNT VALUE saves VALUE again and again, counted
//                                                   (AllocationCounter preloaded), and says
//                                                   "allocations N N …", one N per save()
import Glibc
import SecretTestSupport
import Secrets

/// Writes a line at once: stdout is a file or a pipe here, so print would buffer.
func say(_ line: String) { _ = (line + "\n").withCString { write(1, $0, strlen($0)) } }

func mutate(_ service: String, _ account: String, _ value: String) -> Shared<String?> {
  let key = SecretKey<String?>.secret(service: service, account: account, writeWindow: .seconds(600))
  let shared = Shared<String?>(wrappedValue: nil, key)
  shared.withLock { $0 = "first" }
  let deadline = ContinuousClock.now + .seconds(20)
  while key.hasPendingWrite, ContinuousClock.now < deadline { usleep(10_000) }
  shared.withLock { $0 = value }
  say("pending")
  return shared
}

/// An item of the Secret Service that no change notice reaches.
struct UnwatchedItem: PersistentStore {
  let base: any PersistentStore<[UInt8]>

  var description: String { base.description }
  func read() throws -> [UInt8]? { try base.read() }
  func write(_ bytes: [UInt8]) throws { try base.write(bytes) }
  func delete() throws { try base.delete() }
  func keepCopy(of bytes: [UInt8], stamp: String) throws { try base.keepCopy(of: bytes, stamp: stamp) }
  /// A subscription that follows nothing (nil would have the core try to watch after every save).
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? { SharedSubscription {} }
  var readsBeforeWriting: Bool { base.readsBeforeWriting }
}

/// The handle, held for the life of the process: a last handle going away would write at once,
/// and these modes leave the write to the signal handler or the exit hook.
nonisolated(unsafe) var held: Shared<String?>?

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
  say("usage: secrets-child wait|exit|in-memory|allocations SERVICE ACCOUNT VALUE")
  exit(2)
}
let (mode, service, account, value) = (arguments[1], arguments[2], arguments[3], arguments[4])
switch mode {
case "wait":
  held = mutate(service, account, value)
  while true { pause() }
case "exit":
  held = mutate(service, account, value)
case "allocations":
  // Without the change watch: a signal the provider sends about the key's own write would be
  // handled on another thread while a round is counted, or after it, as timing decides.
  let client = SecretClient()
  let live = SecretKeyStore.secretService(client)
  var unwatched = SharedEnvironment.current
  unwatched.secretKeyStore = SecretKeyStore(owner: client) { UnwatchedItem(base: live.item(at: $0)) }
  let shared = unwatched.withValue {
    Shared<String?>(wrappedValue: value, .secret(service: service, account: account))
  }
  // The client's own mirror of item attributes follows the provider's signals on another
  // thread: a round trip to the provider after each save lets most of the save's arrive first
  // (not all: secretd sends them after its answer, so some still land in the next round).
  let rounds = try await AllocationCounter.allocationRounds(
    rounds: 20, settle: { _ = try await client.read(service: service, account: account) },
    { try await shared.save() })
  say(rounds.map { "allocations " + $0.map { "\($0.allocations)" }.joined(separator: " ") } ?? "not counting")
case "in-memory":
  try await SharedEnvironment.test().withValue {
    let shared = mutate(service, account, value)
    try await shared.save()
    @Shared(.secret(service: service, account: account)) var again: String? = nil
    say(again == value ? "done" : "read back \(String(describing: again))")
  }
default:
  say("unknown mode \(mode)")
  exit(2)
}
