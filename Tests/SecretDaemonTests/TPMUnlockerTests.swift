// The TPM unlocker against swtpm: a key sealed by the TPM opens the key file again, also after
// the TPM restarts; another TPM, or a changed byte of the unlocker, is refused with a reason;
// with no TPM to ask, nothing is added. TPM calls block, so they run on threads of their own.
import SecretMemory
import SecretTestSupport
import Testing
import TransferCrypto

@testable import SecretDaemon

@Suite("the TPM unlocker, with swtpm as the TPM")
struct TPMUnlockerTests {
  /// A key file with a passphrase unlocker (1) and a TPM unlocker (2) sealed by `tpm`, encoded
  /// and read back; and its data key.
  static func keyFile(sealedBy tpm: SoftwareTPM) async throws -> (KeyFile, DataKey) {
    let (file, key, number) = try await onOwnThread {
      let key = try DataKey.random()
      var file = try KeyFile.create(for: key, passphrase: plaintext("passphrase"), parameters: .fastForTests())
      let number = try file.addTPM(for: key, tcti: tpm.tcti)
      return (try KeyFile(decoding: file.encoded()), key, number)
    }
    #expect(number == 2)
    return (file, key)
  }

  /// `file` with the TPM unlocker's body changed by `change`.
  static func changing(_ file: KeyFile, _ change: (inout [UInt8]) -> Void) -> KeyFile {
    let unlockers = file.unlockers.map { unlocker in
      guard unlocker.kind == .tpm2 else { return unlocker }
      var body = unlocker.body
      change(&body)
      return Unlocker(kind: .tpm2, number: unlocker.number, body: body)
    }
    return KeyFile(keyID: file.keyID, keyCheck: file.keyCheck, unlockers: unlockers)
  }

  @Test("a TPM unlocker saved in the key file opens it again to the same data key")
  func roundTrip() async throws {
    try await withSoftwareTPM { tpm, _ in
      let (file, key) = try await Self.keyFile(sealedBy: tpm)
      let (unlocked, number) = try await onOwnThread { try file.unlockWithTPM(tcti: tpm.tcti) }
      #expect(number == 2)
      #expect(unlocked.bytes == key.bytes)
    }
  }

  @Test("after the TPM restarts on the same state, its unlocker still opens the key file")
  func survivesTheTPMsRestart() async throws {
    try await withSoftwareTPM { tpm, _ in
      let (file, key) = try await Self.keyFile(sealedBy: tpm)
      tpm.stop()
      try tpm.start()
      #expect(try await onOwnThread { try file.unlockWithTPM(tcti: tpm.tcti) }.dataKey.bytes == key.bytes)
    }
  }

  @Test("another TPM refuses the unlocker, saying another TPM sealed it, and the passphrase still opens the file")
  func anotherTPMRefuses() async throws {
    try await withSoftwareTPM { tpm, folder in
      let (file, key) = try await Self.keyFile(sealedBy: tpm)
      let other = try SoftwareTPM(stateFolder: folder.appending(path: "other"))
      defer { other.stop() }
      let error = await #expect(throws: KeyFileError.self) {
        try await onOwnThread { try file.unlockWithTPM(tcti: other.tcti) }
      }
      guard case .tpm(number: 2, .foreignObject)? = error else {
        Issue.record("not refused as another TPM's: \(String(describing: error))")
        return
      }
      #expect("\(error!)".contains("another TPM sealed it"), "\(error!)")
      #expect(try file.unlock(passphrase: plaintext("passphrase")).bytes == key.bytes)
    }
  }

  @Test("a changed byte in the sealed object or in the wrapped key is refused, saying why")
  func changedBodyIsRefused() async throws {
    try await withSoftwareTPM { tpm, _ in
      let (file, _) = try await Self.keyFile(sealedBy: tpm)
      let body = try #require(file.unlockers.last?.body)
      let parsed = try #require(TPMUnlocker(body: body))
      let privateStart = 4 + parsed.sealed.publicArea.count + 2
      let inPrivate = Self.changing(file) { $0[privateStart + parsed.sealed.privateArea.count / 2] ^= 0x01 }
      let inWrappedKey = Self.changing(file) { $0[$0.count - 20] ^= 0x01 }
      let otherVersion = Self.changing(file) { $0[0] = 2 }

      let sealedError = await #expect(throws: KeyFileError.self) {
        try await onOwnThread { try inPrivate.unlockWithTPM(tcti: tpm.tcti) }
      }
      #expect("\(sealedError.map(String.init(describing:)) ?? "")".contains("the key file was changed"))
      let wrappedError = await #expect(throws: KeyFileError.self) {
        try await onOwnThread { try inWrappedKey.unlockWithTPM(tcti: tpm.tcti) }
      }
      #expect("\(wrappedError.map(String.init(describing:)) ?? "")".contains("changed since it was sealed"))
      let versionError = await #expect(throws: KeyFileError.self) {
        try await onOwnThread { try otherVersion.unlockWithTPM(tcti: tpm.tcti) }
      }
      #expect(versionError == .malformed(path: "key file", reason: "TPM unlocker 2 unreadable"))
    }
  }

  @Test("with no TPM answering, adding a TPM unlocker names the TCTI and adds nothing")
  func noTPMAddsNothing() async throws {
    try await withSoftwareTPM { tpm, _ in
      let key = try DataKey.random()
      let created = try KeyFile.create(for: key, passphrase: plaintext("passphrase"), parameters: .fastForTests())
      let tcti = tpm.tcti
      tpm.stop()
      let (outcome, file) = try await onOwnThread {
        var file = created
        return (Result { () throws(KeyFileError) in try file.addTPM(for: key, tcti: tcti) }, file)
      }
      guard case .failure(let error) = outcome, case .tpm(number: nil, .unreachable(tcti: tcti, _)) = error else {
        Issue.record("not refused as unreachable: \(outcome)")
        return
      }
      #expect("\(error)".contains("no TPM answered through the TCTI '\(tcti)'"), "\(error)")
      #expect(file == created)
    }
  }
}
