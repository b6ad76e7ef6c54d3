// io.github.swiftsecrets.Secretd1 at /org/freedesktop/secrets: what secretd adds to the Secret
// Service, for `secretctl status` and `secretctl store`: where its store lives, how much of the
// budget it uses, whether the service manager keeps it, and the stores it refused.

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
      }
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
        .array(elementType: "s", object.daemon.keeper.rejections.map { .string($0) })
      },
    ])
}
