// Unlockers of `login` added, listed and removed while secretd runs (Secretd1's AddUnlocker,
// ListUnlockers, RemoveUnlocker). Only the key file changes, replaced atomically: records are
// sealed with the data key alone, so none is re-encrypted. There is always at least one.
import SecretMemory
import Synchronization
import SystemCalls

extension SealedCollection {
  /// What a new unlocker is made from.
  enum NewUnlocker {
    /// A passphrase, of kind `.passphrase` or `.login` (the user's login password, which PAM
    /// hands `secretctl pam-unlock` at login).
    case passphrase(SecretBytes, kind: UnlockerKind)
    /// The TPM a TCTI configuration names (nil: tpm2-tss's default).
    case tpm(tcti: String?)
  }

  /// Why the unlockers were not changed; nothing was.
  enum UnlockerChangeError: Error, Equatable {
    /// `login` is locked: its data key, which a new unlocker wraps, is not in memory.
    case locked
    case emptyPassphrase
    case keyFile(KeyFileError)
  }

  /// One change of the key file at a time: each reads it, changes it and replaces it. A static
  /// lock, as a process serves one sealed collection.
  private static let keyFileChanges = Mutex(())

  /// Adds an unlocker for the data key of `login`, which must be unlocked; returns its number.
  /// Argon2id or the TPM runs outside the store's lock (the TPM's calls block this thread, one
  /// of secretd's own).
  func addUnlocker(_ new: NewUnlocker, storeLock: ReadWriteLock) throws(UnlockerChangeError) -> UInt32 {
    if case .passphrase(let passphrase, _) = new, passphrase.count == 0 { throw .emptyPassphrase }
    guard let dataKey = storeLock.reading({ key }) else { throw .locked }
    return try changeKeyFile { (file) throws(KeyFileError) -> UInt32 in
      switch new {
      case .passphrase(let passphrase, let kind):
        try file.addPassphrase(passphrase, kind: kind, for: dataKey, parameters: parameters)
      case .tpm(let tcti): try file.addTPM(for: dataKey, tcti: tcti)
      }
    }
  }

  /// Removes unlocker `number`; refuses the last one, and refuses while `login` is locked (so
  /// that only whoever could open it changes how it opens).
  func removeUnlocker(number: UInt32, storeLock: ReadWriteLock) throws(UnlockerChangeError) {
    guard storeLock.reading({ key != nil }) else { throw .locked }
    try changeKeyFile { (file) throws(KeyFileError) in try file.removeUnlocker(number: number) }
  }

  /// The key file's unlockers, in the order added; none before the first unlock made the key.
  func unlockers() throws(UnlockerChangeError) -> [Unlocker] {
    do throws(KeyFileError) { return try KeyFile.load(from: keyPath)?.unlockers ?? [] } catch { throw .keyFile(error) }
  }

  /// Reads the key file, lets `change` change it, and replaces it; a failed change writes nothing.
  private func changeKeyFile<R>(_ change: (inout KeyFile) throws(KeyFileError) -> R) throws(UnlockerChangeError) -> R {
    try Self.keyFileChanges.withLock { (_) throws(UnlockerChangeError) -> R in
      do throws(KeyFileError) {
        guard var file = try KeyFile.load(from: keyPath) else {
          throw .file(call: "open", path: keyPath, reason: "the key file is gone")
        }
        let result = try change(&file)
        try file.save(to: keyPath)
        return result
      } catch {
        throw .keyFile(error)
      }
    }
  }
}
