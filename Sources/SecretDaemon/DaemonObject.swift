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
      Method("DiscardRejectedStores", access: .write) { object, _ in
        object.daemon.keeper.discardRejected()
        Log.info("the stores refused at start were discarded, as a client asked")
        return .tuple([])
      },
      // The Argon2id derivation runs outside the store's lock; the loading takes its write lock.
      Method(
        "UnlockWithPassphrase", in: Input("passphrase", .passphrase), out: [Argument("created", "b")], access: .none,
        cost: .unbounded
      ) { object, _, passphrase in try object.unlock(withPassphrase: passphrase) },
      // Argon2id or the TPM runs outside the store's lock; the key file changes one at a time.
      Method(
        "AddUnlocker", in: Input("kind", .string), Input("passphrase", .passphrase), out: [Argument("number", "u")],
        access: .none, cost: .unbounded
      ) { object, _, kind, passphrase in
        try object.addUnlocker(kind: kind, passphrase: passphrase)
      },
      Method("ListUnlockers", out: [Argument("unlockers", "a(us)")], access: .none, cost: .unbounded) { object, _ in
        try object.listUnlockers()
      },
      Method("RemoveUnlocker", in: Input("number", .uint32), access: .none, cost: .unbounded) { object, _, number in
        try object.removeUnlocker(number: number)
      },
    ],
    properties: [
      Property("StoreMemory", "s") { object in
        .string(object.daemon.store.arena.memory.kind.rawValue)
      },
      Property("MemoryBudget", "t") { object in
        .uint64(UInt64(object.daemon.store.limits.maxMemory))
      },
      Property("MemoryUsed", "t") { object in .uint64(UInt64(object.daemon.store.usedBytes)) },
      Property("MaxSecretSize", "t") { object in
        .uint64(UInt64(object.daemon.store.limits.maxSecretSize))
      },
      Property("StoreKept", "b") { object in .boolean(object.daemon.keeper.isKept) },
      Property("RejectedStores", "as") { object in
        let keeper = object.daemon.keeper
        return .array(elementType: "s", (keeper.rejections + (keeper.sealed?.rejectedLogs ?? [])).map { .string($0) })
      },
      Property("SealedCollection", "o") { object in
        .objectPath(
          object.daemon.keeper.sealed == nil ? ObjectPaths.none : ObjectPaths.collection(SealedCollection.name))
      },
      Property("SealedState", "s") { object in
        .string(object.daemon.keeper.sealed?.state(in: object.daemon.store) ?? "off")
      },
    ])

  /// UnlockWithPassphrase(ay passphrase) -> (b created): unlocks the persistent collection, or
  /// makes its key with this passphrase when it has none. The passphrase is copied into locked
  /// memory, wiped when done, and never logged; the bus reader's buffer is scrubbed after.
  private func unlock(withPassphrase value: Variant) throws -> DBusValue {
    let sealed = try sealedCollection()
    let passphrase = try Self.lockedCopy(of: value)
    let created: Bool
    do throws(UnlockError) {
      created = try sealed.unlock(passphrase: passphrase, store: daemon.store, storeLock: daemon.storeLock)
    } catch {
      if error == .wrongPassphrase { Log.warning("a wrong passphrase for \(SealedCollection.name) was refused") }
      throw error
    }
    daemon.announceChanges()
    daemon.completeUnlockPrompts()
    Log.info("\(ObjectPaths.collection(SealedCollection.name)) unlocked\(created ? " with a new data key" : "")")
    return .tuple([.boolean(created)])
  }
}
