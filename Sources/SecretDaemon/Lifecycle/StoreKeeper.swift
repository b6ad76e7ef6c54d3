// Where the store comes from at start and where it goes: the arena the service manager kept
// (systemd's file descriptor store) is opened and served again; a new one is made when there is
// none; either is handed to the service manager, so that a crash, an OOM kill or a restart onto
// a new binary loses nothing. An arena that does not check out is never served and never
// dropped: it is kept, under another name, until the user discards it. One that could not be
// mapped for want of resources stays kept as it is, for the next start to try again; one that an
// earlier secretd died opening is set aside without being opened again.
package import SystemCalls

/// The store secretd serves, the arena under it, and what became of any arena it was handed.
package final class StoreKeeper {
  /// The name the service manager keeps the arena under, and the one for arenas refused.
  static let storeName = "store"
  static let rejectedName = "rejected"
  /// Held by the service manager while secretd opens the store it kept: found at a start, it
  /// says the last start died opening it.
  static let openingName = "opening"

  let store: Store
  /// The persistent collection's backing, with `--persistent`.
  let sealed: SealedCollection?
  /// Why an arena the service manager handed back was refused, one line each.
  package private(set) var rejections: [String]
  /// Refused arenas this process holds, to keep them with the service manager.
  private var rejected: [FileDescriptor]
  /// What secretd tells at start, one line each.
  package let report: [String]
  /// Whether the store was handed to the service manager (FDSTORE=1 sent).
  private var isHanded = false
  /// Whether the service manager keeps the store (confirmed by its unit's setting): a crash or a
  /// restart then loses nothing.
  package private(set) var isKept = false
  /// Why the store the service manager keeps is not served now though it stays kept, when it
  /// could not be mapped (resources): this process's store is then not handed over.
  private var keptForNextStart: String?

  /// Opens the arena named `store` among `inherited` descriptors, or makes a new one, and the
  /// store in it. Throws when no arena can be had at all (memory cannot be mapped or locked).
  package convenience init(
    configuration: Configuration, inherited: [(name: String, descriptor: FileDescriptor)]
  ) throws(StoreKeeperError) {
    try self.init(configuration: configuration, inherited: inherited, clock: SystemExpiryClock())
  }

  init(
    configuration: Configuration, inherited: [(name: String, descriptor: FileDescriptor)], clock: any ExpiryClock
  ) throws(StoreKeeperError) {
    rejected = inherited.filter { $0.name == Self.rejectedName }.map(\.descriptor)
    rejections = rejected.map { _ in "refused by an earlier secretd (see its log)" }
    var report: [String] = []
    var recovered: Store?
    let diedOpening = inherited.contains { $0.name == Self.openingName }
    if diedOpening { Self.unmarkOpening() }
    for marker in inherited where marker.name == Self.openingName { marker.descriptor.close() }
    if let handed = inherited.first(where: { $0.name == Self.storeName })?.descriptor {
      let outcome =
        diedOpening
        ? .failure(Refusal("an earlier secretd died while opening it"))
        : Self.recoverMarked(handed, configuration: configuration, clock: clock)
      switch outcome {
      case .success(let store):
        recovered = store
        report.append(Self.describeRecovery(store))
      case .failure(let reason) where reason.isTransient:
        keptForNextStart = reason.description
        report.append(
          "the store the service manager kept is not served now: \(reason); it stays kept for the next start, "
            + "and this start serves an empty store that a crash or restart loses")
      case .failure(let reason):
        rejections.append(reason.description)
        rejected.append(handed)
        report.append(
          "the store the service manager kept is not served: \(reason); it is kept as '\(Self.rejectedName)' "
            + "until you discard it (secretctl store discard-rejected), and secretd starts with an empty store")
        Self.moveToRejected(handed)
      }
    }
    if let recovered {
      store = recovered
    } else {
      do throws(ArenaMemoryError) {
        store = try Self.fresh(configuration: configuration, clock: clock)
      } catch {
        throw .noMemory(error)
      }
    }
    report.append(Self.describeMemory(store, configuration))
    if let folder = configuration.persistentFolder {
      let attached = try SealedCollection.attach(folder: folder, to: store)
      report.append(
        attached.unlockWithKeptKey(inherited, store: store)
          ?? attached.unlockWithTPM(tcti: configuration.tcti, store: store))
      sealed = attached
    } else {
      sealed = nil
    }
    self.report = report
  }

  /// A store in a new arena, kept nowhere else (tests and a secretd without a service manager).
  static func fresh(configuration: Configuration, clock: any ExpiryClock = SystemExpiryClock()) throws(ArenaMemoryError)
    -> Store
  {
    let memory = try ArenaMemory.make(
      size: configuration.limits.arenaSize, allowUnlocked: configuration.allowUnlockedMemory)
    let arena = Arena(formatting: memory, now: clock.now())
    do throws(StoreError) {
      return try Store(
        formatting: arena, limits: configuration.limits, clock: clock, defaultTTL: configuration.defaultTTL,
        limited: false)
    } catch {
      throw .cannotMap(size: memory.size, reason: "the arena cannot hold its first collection (\(error))")
    }
  }

  /// Hands the arena to the service manager (when there is one), to be given back to the next
  /// secretd. Returns whether it was sent; ``confirmKept(on:)`` then says whether it is kept.
  @discardableResult
  package func handToServiceManager() -> Bool {
    guard ServiceManager.isListening, keptForNextStart == nil else { return false }
    do throws(Errno) {
      try ServiceManager.notify("FDSTORE=1\nFDNAME=\(Self.storeName)", descriptors: [store.arena.memory.file])
      isHanded = true
    } catch {
      Log.warning("the service manager did not take the store (\(error)): a crash or restart will lose it")
    }
    return isHanded
  }

  /// Asks the service manager on `connection` whether secretd's unit keeps descriptors, once the
  /// store was handed to it: only then is the store kept. Returns why not, when it is not.
  package func confirmKept(on connection: BusConnection) -> String? {
    guard isHanded else { return nil }
    switch ServiceUnit.descriptorStoreLimit(of: .current, on: connection) {
    case .some(let limit) where limit > 0:
      isKept = true
      return nil
    case .some:
      return "secretd's unit keeps no descriptors (FileDescriptorStoreMax=0): a crash or restart will lose the store"
    case .none:
      return "no service manager on this bus says whether secretd's unit keeps the store: `status` says it is not kept"
    }
  }

  /// Lets every refused arena go, from this process and from the service manager, and forgets
  /// the damaged logs set aside (their files stay).
  package func discardRejected() {
    if ServiceManager.isListening {
      try? ServiceManager.notify("FDSTOREREMOVE=1\nFDNAME=\(Self.rejectedName)")
    }
    for descriptor in rejected { descriptor.close() }
    rejected = []
    rejections = []
    sealed?.rejectedLogs = []
  }

  // MARK: Opening

  /// `recover`, with the service manager holding a marker meanwhile: if this process dies in
  /// there (a crafted or damaged arena no check foresaw), the next start does not try again.
  private static func recoverMarked(
    _ descriptor: FileDescriptor, configuration: Configuration, clock: any ExpiryClock
  ) -> Result<Store, Refusal> {
    let marked = markOpening()
    defer { if marked { unmarkOpening() } }
    return recover(descriptor, configuration: configuration, clock: clock)
  }

  /// Hands the service manager an empty memfd named `opening`; whether it could.
  private static func markOpening() -> Bool {
    guard ServiceManager.isListening, let marker = try? FileDescriptor.sealableMemory(name: "secretd-opening") else {
      return false
    }
    defer { marker.close() }
    return (try? ServiceManager.notify("FDSTORE=1\nFDNAME=\(openingName)", descriptors: [marker])) != nil
  }

  private static func unmarkOpening() {
    guard ServiceManager.isListening else { return }
    try? ServiceManager.notify("FDSTOREREMOVE=1\nFDNAME=\(openingName)")
  }

  private static func recover(
    _ descriptor: FileDescriptor, configuration: Configuration, clock: any ExpiryClock
  ) -> Result<Store, Refusal> {
    let memory: ArenaMemory
    do throws(ArenaMemoryError) {
      memory = try ArenaMemory.adopt(descriptor, allowUnlocked: configuration.allowUnlockedMemory)
    } catch {
      switch error {
      case .cannotMap(let size, let reason):
        return .failure(Refusal("its \(size) bytes cannot be mapped and locked (\(reason))", isTransient: true))
      case .unusable(let reason): return .failure(Refusal(reason))
      }
    }
    do throws(ArenaError) {
      let (arena, contents) = try Arena.open(memory, isValidName: Store.isValidName)
      // A kept arena cannot grow: a larger --max-memory takes effect once the store is new.
      var limits = configuration.limits
      limits.maxMemory = min(limits.maxMemory, Limits.budget(ofArenaSized: memory.size))
      return .success(
        Store(recovering: arena, contents: contents, limits: limits, clock: clock, defaultTTL: configuration.defaultTTL)
      )
    } catch {
      return .failure(Refusal("\(error)"))
    }
  }

  /// Why an arena handed back is not served.
  private struct Refusal: Error, CustomStringConvertible {
    let description: String
    /// Whether it is for want of resources, so another start may serve it.
    var isTransient = false
    init(_ description: String, isTransient: Bool = false) {
      (self.description, self.isTransient) = (description, isTransient)
    }
  }

  /// Renames a refused arena in the service manager's store. Between the two messages only this
  /// process holds it.
  private static func moveToRejected(_ descriptor: FileDescriptor) {
    guard ServiceManager.isListening else { return }
    try? ServiceManager.notify("FDSTOREREMOVE=1\nFDNAME=\(storeName)")
    try? ServiceManager.notify("FDSTORE=1\nFDNAME=\(rejectedName)", descriptors: [descriptor])
  }

  private static func describeRecovery(_ store: Store) -> String {
    let items = store.itemCount == 1 ? "1 item" : "\(store.itemCount) items"
    let collections = store.collections.count == 1 ? "1 collection" : "\(store.collections.count) collections"
    return "serving again the store the service manager kept: \(items) in \(collections), "
      + "budget \(Size.text(store.limits.maxMemory))"
  }

  private static func describeMemory(_ store: Store, _ configuration: Configuration) -> String {
    let memory = store.arena.memory
    var line = "store in \(Size.text(memory.size)) of \(memory.kind.summary)"
    if let refusal = memory.secretMemoryRefusal, memory.kind != .secret { line += " (\(refusal))" }
    return line
  }
}

/// Why secretd has no store to serve.
package struct StoreKeeperError: Error, CustomStringConvertible {
  package let description: String

  static func noMemory(_ error: ArenaMemoryError) -> StoreKeeperError {
    switch error {
    case .unusable(let reason): return StoreKeeperError(description: "no store: \(reason)")
    case .cannotMap(let size, let reason):
      let limit = ResourceLimits.lockedMemory.map(Size.text) ?? "unlimited"
      return StoreKeeperError(
        description: "cannot map and lock \(Size.text(size)) for the store (\(reason)); RLIMIT_MEMLOCK is \(limit): "
          + "raise LimitMEMLOCK= in the unit or ulimit -l, lower \(Limit.memory.flag), or start secretd with "
          + "--allow-unlocked-memory")
    }
  }
}
