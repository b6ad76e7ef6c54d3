// io.github.swiftsecrets.Secretd1 at /org/freedesktop/secrets: what secretd adds to the Secret
// Service, for `secretctl status` and `secretctl store`: where its store lives, how much of the
// budget it uses, whether the service manager keeps it, and the stores it refused; and, with
// `--persistent`, the state of the sealed collection, the call that unlocks it and its
// unlockers (DaemonObject+Unlockers.swift).
import GLibBridge
import SecretMemory

struct DaemonObject: BusObject {
  let daemon: Daemon

  init(daemon: Daemon, node: ObjectNode) { self.daemon = daemon }

  // MARK: Members on the bus

  static let declaration = InterfaceDeclaration<DaemonObject>(
    Interfaces.secretd,
    methods: [
      Method("DiscardRejectedStores", access: .write) { object, _, _ throws(DBusError) in
        object.daemon.keeper.discardRejected()
        Log.info("the stores refused at start were discarded, as a client asked")
        return .tuple([])
      },
      // The Argon2id derivation runs outside the store's lock; the loading takes its write lock.
      Method(
        "UnlockWithPassphrase", in: [Argument("passphrase", "ay")], out: [Argument("created", "b")], access: .none,
        cost: .unbounded
      ) { object, arguments, context throws(DBusError) in
        try object.unlockWithPassphrase(arguments, context: context)
      },
      // Argon2id or the TPM runs outside the store's lock; the key file changes one at a time.
      Method(
        "AddUnlocker", in: [Argument("kind", "s"), Argument("passphrase", "ay")], out: [Argument("number", "u")],
        access: .none, cost: .unbounded
      ) { object, arguments, context throws(DBusError) in
        try object.addUnlocker(arguments, context: context)
      },
      Method("ListUnlockers", out: [Argument("unlockers", "a(us)")], access: .none, cost: .unbounded) {
        object, _, _ throws(DBusError) in
        try object.listUnlockers()
      },
      Method("RemoveUnlocker", in: [Argument("number", "u")], access: .none, cost: .unbounded) {
        object, arguments, _ throws(DBusError) in
        try object.removeUnlocker(arguments)
      },
    ],
    properties: [
      Property("StoreMemory", "s") { object throws(DBusError) in
        .string(object.daemon.store.arena.memory.kind.rawValue)
      },
      Property("MemoryBudget", "t") { object throws(DBusError) in
        .uint64(UInt64(object.daemon.store.limits.maxMemory))
      },
      Property("MemoryUsed", "t") { object throws(DBusError) in .uint64(UInt64(object.daemon.store.usedBytes)) },
      Property("MaxSecretSize", "t") { object throws(DBusError) in
        .uint64(UInt64(object.daemon.store.limits.maxSecretSize))
      },
      Property("StoreKept", "b") { object throws(DBusError) in .boolean(object.daemon.keeper.isKept) },
      Property("RejectedStores", "as") { object throws(DBusError) in
        let keeper = object.daemon.keeper
        return .array(elementType: "s", (keeper.rejections + (keeper.sealed?.rejectedLogs ?? [])).map { .string($0) })
      },
      Property("SealedCollection", "o") { object throws(DBusError) in
        .objectPath(
          object.daemon.keeper.sealed == nil ? ObjectPaths.none : ObjectPaths.collection(SealedCollection.name))
      },
      Property("SealedState", "s") { object throws(DBusError) in
        .string(object.daemon.keeper.sealed?.state(in: object.daemon.store) ?? "off")
      },
    ])

  /// UnlockWithPassphrase(ay passphrase) -> (b created): unlocks the persistent collection, or
  /// makes its key with this passphrase when it has none. The passphrase is copied into locked
  /// memory, wiped when done, and never logged; the bus reader's buffer is scrubbed after.
  private func unlockWithPassphrase(_ arguments: Variant, context: CallContext) throws(DBusError) -> DBusValue {
    guard let sealed = daemon.keeper.sealed else {
      throw .notSupported("secretd runs without --persistent: no collection is sealed on disk")
    }
    context.receivedPlainSecret = true
    guard let value = arguments.child(0),
      let copied = value.withBytes({ SecretBytes(lockedCopying: $0) }), let passphrase = copied
    else { throw .noMemory("no locked memory for the passphrase (RLIMIT_MEMLOCK)") }
    let created: Bool
    do throws(UnlockError) {
      created = try sealed.unlock(passphrase: passphrase, store: daemon.store, storeLock: daemon.storeLock)
    } catch {
      if error == .wrongPassphrase { Log.warning("a wrong passphrase for \(SealedCollection.name) was refused") }
      throw DBusError(error)
    }
    daemon.announceChanges()
    daemon.completeUnlockPrompts()
    Log.info("\(ObjectPaths.collection(SealedCollection.name)) unlocked\(created ? " with a new data key" : "")")
    return .tuple([.boolean(created)])
  }
}
