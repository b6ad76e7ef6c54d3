// The persistent collection `login` (`secretd --persistent`): besides the arena, every item is
// written, sealed, to a record log in the data folder (`login.log`), with the data key wrapped in
// a key file beside it (`login.key`). It starts locked and empty in memory; a passphrase opens it
// (and, the first time, makes the key); locking it wipes its items from memory.
import SecretMemory
import Synchronization
import SystemCalls
import TransferCrypto

/// The backing of the collection `login`: its record log, and its data key while unlocked.
package final class SealedCollection: CollectionBacking, @unchecked Sendable {
  // SAFETY: `log` and `key` are used only under the daemon's store write lock (the store's
  // writes, and the part of `unlock` that loads items) or before the daemon serves;
  // `rejectedLogs` is changed there too (and by `DiscardRejectedStores`, a writer) and read
  // under the store's read lock (`RejectedStores`); `attempts` locks itself and serialises unlocks.
  static let name = "login"
  static let label = "Login"
  /// How long the unlock after `failures` wrong passphrases in a row waits: 1 s, doubled each
  /// time, at most 30 s.
  static func delay(afterFailures failures: Int) -> Duration {
    failures == 0 ? .zero : .seconds(min(30, 1 << min(failures - 1, 5)))
  }

  let folder: String
  var keyPath: String { folder + "/login.key" }
  var logPath: String { folder + "/login.log" }
  /// Argon2id's costs for a new passphrase unlocker.
  let parameters: Argon2Parameters
  private(set) var log: RecordLog?
  private(set) var key: DataKey?
  /// Damaged logs set aside, one line each saying where and what to do, until discarded.
  var rejectedLogs: [String] = []
  private let attempts = Mutex(Attempts())

  private struct Attempts {
    var failures = 0
    var notBefore = ContinuousClock.now
  }

  init(folder: String, parameters: Argon2Parameters) {
    (self.folder, self.parameters) = (folder, parameters)
  }

  /// Makes the data folder (readable by its owner only), opens the log if there is one (no key
  /// needed: its records are checked, a torn tail cut; a damaged one is set aside, and `login`
  /// starts anew at its unlock), and makes `login` in `store`: locked,
  /// empty, under the alias `default`. A `login` the store already held (an arena kept by the
  /// service manager) is emptied, its items wiped: the log has them.
  static func attach(
    folder: String, to store: Store, parameters: Argon2Parameters = .standard()
  ) throws(StoreKeeperError) -> SealedCollection {
    func refused(_ reason: String) -> StoreKeeperError {
      StoreKeeperError(description: "the persistent collection cannot be served: \(reason)")
    }
    do throws(FileCallError) {
      try Files.makeDirectories(Files.split(folder).directory)
      try Files.makePrivateDirectory(folder)
    } catch {
      throw refused("\(error.call) on \(error.path) failed: \(error.errno)")
    }
    let sealed = SealedCollection(folder: folder, parameters: parameters)
    sealed.reportLogsSetAside()
    do throws(RecordLogError) { try sealed.openExistingLog() } catch { throw refused("\(error)") }
    do throws(StoreError) {
      if store.collections[name] == nil {
        store.appliesLimits = false
        defer { store.appliesLimits = true }
        try store.createCollection(label: label, alias: "", named: name)
      }
      try store.collection(name).backing = sealed
      try store.setLocked(name, true)
      try store.setAlias("default", to: name)
    } catch {
      throw refused("\(error)")
    }
    // Item numbers are unique across the store: new items never take one the log holds.
    if let log = sealed.log {
      let largest = (Array(log.live.keys) + Array(log.tombstones.keys)).map(\.item).max() ?? 0
      if store.arena.nextItemNumber <= largest { store.arena.nextItemNumber = largest + 1 }
    }
    return sealed
  }

  // MARK: The store's writes

  func persist(item number: Int, payload: UnsafeRawBufferPointer) throws(StoreError) {
    guard let log, let key else { throw .locked(collection: Self.name) }
    do throws(RecordLogError) {
      try log.put(payload, in: RecordSlot(collection: Self.name, item: UInt64(number)), key: key)
    } catch {
      throw .notPersisted(collection: Self.name, reason: "\(error)")
    }
  }

  func persistDeletion(item number: Int) throws(StoreError) {
    guard let log, let key else { throw .locked(collection: Self.name) }
    let slot = RecordSlot(collection: Self.name, item: UInt64(number))
    guard log.live[slot] != nil else { return }
    do throws(RecordLogError) { try log.delete(slot, key: key) } catch {
      throw .notPersisted(collection: Self.name, reason: "\(error)")
    }
  }

  var isOpen: Bool { key != nil }

  func close() {
    key = nil
    forgetKeptKey()
  }

  // MARK: Unlocking

  /// What `SealedState` tells: `new` (no key yet: the first unlock makes one), `locked` or
  /// `unlocked`. Read under the store's lock.
  func state(in store: Store) -> String {
    if store.collections[Self.name]?.locked == false { return "unlocked" }
    return Files.exists(keyPath) ? "locked" : "new"
  }

  /// Unlocks `login` with `passphrase`: the key file's passphrase unlocker gives the data key
  /// (Argon2id, outside the store's lock), the log's records are unsealed and loaded into the
  /// store, and the collection is unlocked. With no key file yet, makes the data key and the
  /// passphrase unlocker (first use). A wrong passphrase changes nothing, and makes the next
  /// attempt wait (``delay(afterFailures:)``). Returns whether the key was made now.
  func unlock(passphrase: SecretBytes, store: Store, storeLock: ReadWriteLock) throws(UnlockError) -> Bool {
    try attempts.withLock { (state) throws(UnlockError) -> Bool in
      let wait = state.notBefore - ContinuousClock.now
      if wait > .zero {
        let (seconds, attoseconds) = wait.components
        NativeThread.sleep(milliseconds: Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000) + 1)
      }
      let (dataKey, keyFile, created): (DataKey, KeyFile, Bool)
      do throws(UnlockError) {
        (dataKey, keyFile, created) = try obtainKey(passphrase)
      } catch {
        if error == .wrongPassphrase {
          state.failures += 1
          state.notBefore = ContinuousClock.now + Self.delay(afterFailures: state.failures)
        }
        throw error
      }
      state.failures = 0
      try storeLock.writing { () throws(UnlockError) in try load(with: dataKey, keyID: keyFile.keyID, into: store) }
      keepKey()
      return created
    }
  }

  /// The data key from the key file and `passphrase`, or a new one (and a new key file) when
  /// there is none and the log holds nothing it would orphan.
  private func obtainKey(_ passphrase: SecretBytes) throws(UnlockError) -> (DataKey, KeyFile, Bool) {
    let existing: KeyFile?
    do throws(KeyFileError) { existing = try KeyFile.load(from: keyPath) } catch { throw .keyFile("\(error)") }
    if let existing {
      do throws(KeyFileError) { return (try existing.unlock(passphrase: passphrase), existing, false) } catch {
        if error == .wrongPassphrase { throw .wrongPassphrase }
        throw .keyFile("\(error)")
      }
    }
    guard passphrase.count > 0 else { throw .emptyPassphrase }
    if Files.exists(logPath) {
      throw .keyFile(
        "\(keyPath) is missing but \(logPath) exists: its items cannot be opened without it; restore the key "
          + "file, or move the log aside to start anew")
    }
    do {
      let dataKey = try DataKey.random()
      let file = try KeyFile.create(for: dataKey, passphrase: passphrase, parameters: parameters)
      try file.save(to: keyPath)
      return (dataKey, file, true)
    } catch let error as KeyFileError {
      throw .keyFile("\(error)")
    } catch {
      throw .keyFile("a new data key could not be made: \(error)")
    }
  }

  /// Under the store's write lock: the log (made when there is none), every record unsealed and
  /// loaded, the collection unlocked. Nothing changes unless all of it succeeds, but for a
  /// damaged log, which is set aside whole for a new, empty one (``unsealedLog(with:keyID:)``).
  func load(with dataKey: DataKey, keyID: [UInt8], into store: Store) throws(UnlockError) {
    guard let collection = store.collections[Self.name] else { throw .log("the collection \(Self.name) is gone") }
    if !collection.locked && key != nil { return }
    let (log, opened) = try unsealedLog(with: dataKey, keyID: keyID)
    do throws(StoreError) {
      try store.loadItems(opened.map { (Int($0.key.item), $0.value) }, into: Self.name)
      key = dataKey
      try store.setLocked(Self.name, false)
    } catch {
      key = nil
      store.wipeItems(of: collection)
      throw .store(error)
    }
    // Space is reclaimed while nothing else writes: the file then tracks the live items.
    if log.reclaimableBytes > max(64 * 1024, log.size / 2) {
      do throws(RecordLogError) { try log.compact() } catch {
        Log.warning("\(logPath) could not be compacted: \(error)")
      }
    }
  }

  /// The log's live items unsealed with the data key, from the log opened (or made when there
  /// is none). A log that is damaged, or holds a record that does not open with this key, the
  /// key its head names, is never served in part: it is set aside whole, and a new, empty log
  /// takes its place.
  private func unsealedLog(with dataKey: DataKey, keyID: [UInt8]) throws(UnlockError) -> (
    RecordLog, [RecordSlot: SecretBytes]
  ) {
    let current: RecordLog
    do throws(RecordLogError) {
      try openExistingLog()
      if let log { current = log } else { current = try RecordLog.create(at: logPath, keyID: keyID) }
      log = current
    } catch {
      throw .log("\(error)")
    }
    guard current.keyID == keyID else {
      throw .log("\(logPath) was sealed with another data key than \(keyPath)'s: refused, nothing unlocked")
    }
    do throws(RecordLogError) {
      do throws(RecordLogError) { return (current, try current.unseal(with: dataKey)) } catch {
        guard error.isDamage else { throw error }
        try setAside(damagedLog: error)
        log = nil
        let fresh = try RecordLog.create(at: logPath, keyID: keyID)
        log = fresh
        return (fresh, [:])
      }
    } catch {
      throw .log("\(error)")
    }
  }

  /// Opens the log file, when there is one and no log is open; a damaged one is set aside.
  private func openExistingLog() throws(RecordLogError) {
    guard log == nil, Files.exists(logPath) else { return }
    do throws(RecordLogError) { log = try RecordLog.open(at: logPath) } catch {
      guard error.isDamage else { throw error }
      try setAside(damagedLog: error)
      return
    }
    if let dropped = log?.droppedTailBytes, dropped > 0 {
      Log.info("\(logPath): a torn tail of \(dropped) bytes (an append never acknowledged) was cut off")
    }
  }
}

/// Why `login` was not unlocked; nothing was changed.
enum UnlockError: Error, Equatable {
  case wrongPassphrase
  case emptyPassphrase
  case keyFile(String)
  case log(String)
  case store(StoreError)
}
