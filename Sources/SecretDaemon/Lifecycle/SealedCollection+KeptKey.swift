// The data key of an unlocked `login`, kept by the service manager beside the store, so that a
// crash, an OOM kill or `systemctl --user restart` finds `login` as unlocked as it left it. It
// lives in secret memory (memfd_secret, else a locked memfd), like the arena, which holds
// `login`'s decrypted items while it is unlocked: keeping the key there exposes nothing more.
// `Lock` and `stop` drop it; a reboot never sees it.
import SecretMemory
import SystemCalls
import TransferCrypto

extension SealedCollection {
  /// The name the service manager keeps the key under.
  static let keptKeyName = "login-key"

  /// Hands the data key to the service manager (replacing any it kept), when unlocked; without
  /// a service manager the notification goes nowhere, and nothing is kept.
  func keepKey() {
    guard let key, ServiceManager.isListening else { return }
    guard let memory = try? ArenaMemory.make(size: Memory.pageSize, allowUnlocked: false) else {
      return Log.warning("no secret memory for \(Self.name)'s key: a crash will leave it locked")
    }
    key.bytes.withUnsafeBytes {
      UnsafeMutableRawBufferPointer(start: memory.base, count: DataKey.length).copyMemory(from: $0)
    }
    try? ServiceManager.notify("FDSTOREREMOVE=1\nFDNAME=\(Self.keptKeyName)")
    try? ServiceManager.notify("FDSTORE=1\nFDNAME=\(Self.keptKeyName)", descriptors: [memory.file])
  }

  /// Lets the kept key go: `login` is locked.
  func forgetKeptKey() {
    guard ServiceManager.isListening else { return }
    try? ServiceManager.notify("FDSTOREREMOVE=1\nFDNAME=\(Self.keptKeyName)")
  }

  /// Unlocks `login` with the key the service manager kept, if it kept one that is the key
  /// file's; the log's items are loaded again (it has every acknowledged write). Returns the
  /// start's line about it, or nil when there was no key to use. Closes the handed descriptors.
  func unlockWithKeptKey(_ inherited: [(name: String, descriptor: FileDescriptor)], store: Store) -> String? {
    let handed = inherited.filter { $0.name == Self.keptKeyName }.map(\.descriptor)
    defer { handed.forEach { $0.close() } }
    guard let file = handed.last else { return nil }
    let sealedIn = "the persistent collection \(Self.name) (the default) is sealed in \(folder)"
    guard let keyFile = try? KeyFile.load(from: keyPath), let dataKey = Self.read(file), keyFile.isKey(dataKey) else {
      forgetKeptKey()
      return nil
    }
    do throws(UnlockError) { try load(with: dataKey, keyID: keyFile.keyID, into: store) } catch {
      return "\(sealedIn); the key kept through the restart did not open it, so it stays locked: "
        + DBusError(error).message
    }
    let count = store.collections[Self.name]?.items.count ?? 0
    return "\(sealedIn); still unlocked after the restart (its key kept by the service manager): "
      + (count == 1 ? "1 item" : "\(count) items")
  }

  /// The key in a kept page, in locked memory; nil when the page does not hold one.
  private static func read(_ file: FileDescriptor) -> DataKey? {
    guard let memory = try? ArenaMemory.adopt(file, allowUnlocked: false), memory.size >= DataKey.length,
      let bytes = SecretBytes(lockedCount: DataKey.length)
    else { return nil }
    bytes.withUnsafeMutableBytes {
      $0.copyMemory(from: UnsafeRawBufferPointer(start: memory.base, count: DataKey.length))
    }
    return try? DataKey(bytes: bytes)
  }
}
