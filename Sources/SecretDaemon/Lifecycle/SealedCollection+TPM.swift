// At start, before secretd serves: when login.key has a TPM unlocker, the TPM unseals the data
// key and `login` is unlocked with nobody typing (the headless path). When the TPM fails,
// `login` stays locked, and the line secretd logs says why and how to unlock it.

extension SealedCollection {
  /// Unlocks `login` with the key file's TPM unlocker through the TPM `tcti` names (nil:
  /// tpm2-tss's default), when it has one. Runs before secretd serves (the TPM's calls block,
  /// and nothing else uses the store yet). Returns the line to log: what opened `login`, or why
  /// it stays locked and how to unlock it. Nothing on disk changes when it fails.
  func unlockWithTPM(tcti: String?, store: Store) -> String {
    let sealedIn = "the persistent collection \(Self.name) (the default) is sealed in \(folder)"
    let keyFile: KeyFile?
    do throws(KeyFileError) { keyFile = try KeyFile.load(from: keyPath) } catch {
      return "\(sealedIn); it stays locked: \(error)"
    }
    guard let keyFile, keyFile.unlockers.contains(where: { $0.kind == .tpm2 }) else {
      return "\(sealedIn); it is locked until unlocked with its passphrase (secretctl unlock)"
    }
    do throws(KeyFileError) {
      let (dataKey, number) = try keyFile.unlockWithTPM(tcti: tcti)
      do throws(UnlockError) { try load(with: dataKey, keyID: keyFile.keyID, into: store) } catch {
        return
          "\(sealedIn); the TPM opened its key (unlocker \(number)), yet it stays locked: \(DBusError(error).message)"
      }
      keepKey()
      let count = store.collections[Self.name]?.items.count ?? 0
      return "\(sealedIn); the TPM unlocked it (unlocker \(number)) with nobody typing: "
        + (count == 1 ? "1 item" : "\(count) items")
    } catch {
      let remedy =
        keyFile.unlockers.contains(where: { KeyFile.passphraseKinds.contains($0.kind) })
        ? "`secretctl unlock` opens it with its passphrase"
        : "it has no passphrase unlocker: make the TPM reachable (secretd --tcti) and restart secretd"
      return "\(sealedIn); the TPM did not unlock it, so it stays locked (\(error)); \(remedy)"
    }
  }
}
