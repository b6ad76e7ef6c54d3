// Secretd1's AddUnlocker, ListUnlockers and RemoveUnlocker: the ways into the persistent
// collection `login`, changed without re-encrypting any item (`secretctl unlocker`).
import GLibBridge
import SecretMemory

extension DaemonObject {
  /// AddUnlocker(s kind, ay passphrase) -> (u number): `passphrase` (the passphrase given, copied
  /// into locked memory and never logged), `login` (the same, the user's login password) or `tpm`
  /// (the TPM secretd --tcti names, the passphrase empty). Needs `login` unlocked.
  func addUnlocker(kind: String, passphrase value: Variant) throws -> DBusValue {
    let sealed = try sealedCollection()
    let new: SealedCollection.NewUnlocker
    switch kind {
    case UnlockerKind.passphrase.name, UnlockerKind.login.name:
      new = .passphrase(try Self.lockedCopy(of: value), kind: kind == UnlockerKind.login.name ? .login : .passphrase)
    case UnlockerKind.tpm2.name:
      guard value.withBytes({ $0.isEmpty }) == true else {
        throw DBusError.invalidArgs("a TPM unlocker takes no passphrase")
      }
      new = .tpm(tcti: daemon.configuration.tcti)
    default:
      throw DBusError.invalidArgs("no unlocker of kind '\(kind)': passphrase, login or tpm")
    }
    let number: UInt32
    do throws(SealedCollection.UnlockerChangeError) {
      number = try sealed.addUnlocker(new, storeLock: daemon.storeLock)
    } catch {
      throw DBusError(error, doing: "no unlocker was added")
    }
    Log.info("unlocker \(number) (\(kind)) added to \(SealedCollection.name)")
    return .tuple([.uint32(number)])
  }

  /// ListUnlockers() -> (a(us) unlockers): each unlocker's number and kind, in the order added.
  func listUnlockers() throws -> DBusValue {
    let sealed = try sealedCollection()
    let unlockers: [Unlocker]
    do throws(SealedCollection.UnlockerChangeError) { unlockers = try sealed.unlockers() } catch {
      throw DBusError(error, doing: "the unlockers cannot be listed")
    }
    return .tuple([
      .array(elementType: "(us)", unlockers.map { .tuple([.uint32($0.number), .string($0.kind.name)]) })
    ])
  }

  /// RemoveUnlocker(u number): refused for the last unlocker, and while `login` is locked.
  func removeUnlocker(number: UInt32) throws -> DBusValue {
    let sealed = try sealedCollection()
    do throws(SealedCollection.UnlockerChangeError) {
      try sealed.removeUnlocker(number: number, storeLock: daemon.storeLock)
    } catch {
      throw DBusError(error, doing: "no unlocker was removed")
    }
    Log.info("unlocker \(number) removed from \(SealedCollection.name)")
    return .tuple([])
  }

  func sealedCollection() throws(DBusError) -> SealedCollection {
    guard let sealed = daemon.keeper.sealed else {
      throw .notSupported("secretd runs without --persistent: no collection is sealed on disk")
    }
    return sealed
  }

  /// A passphrase sent as `ay`, copied into locked memory (wiped when let go).
  static func lockedCopy(of value: Variant) throws(DBusError) -> SecretBytes {
    guard let copied = value.withBytes({ SecretBytes(lockedCopying: $0) }), let passphrase = copied else {
      throw .noMemory("no locked memory for the passphrase (RLIMIT_MEMLOCK)")
    }
    return passphrase
  }
}

extension DBusError {
  /// Converts a refused change of the unlockers; `outcome` says that nothing changed.
  init(_ error: SealedCollection.UnlockerChangeError, doing outcome: String) {
    let collection = ObjectPaths.collection(SealedCollection.name)
    switch error {
    case .locked:
      self = .isLocked(
        "\(collection) is locked, and its unlockers change only while it is open: run `secretctl unlock` first; "
          + outcome)
    case .emptyPassphrase:
      self = .invalidArgs("an empty passphrase opens nothing; \(outcome)")
    case .keyFile(.noSuchUnlocker(let number)):
      self = .noSuchObject("\(collection) has no unlocker \(number) (`secretctl unlocker list`); \(outcome)")
    case .keyFile(.lastUnlocker):
      self = .failed(
        "the last unlocker of \(collection) stays: without one its items could never be opened again; add another "
          + "first (`secretctl unlocker add`); \(outcome)")
    case .keyFile(let reason):
      self = .failed("\(reason); \(outcome)")
    }
  }
}
