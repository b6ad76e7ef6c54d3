// The TPM unlocker: the machine's TPM 2.0 seals a random wrapping key (a sealed data object
// under the storage key its owner hierarchy derives from a fixed template), and that key wraps
// the data key (AES-256-GCM). Only the TPM that sealed it loads the object, so the key file
// copied to another machine opens nothing there; at start, nobody types anything.
//
// Body, version 1 (integers little-endian; the TPM's areas are its own marshalling, big-endian):
//   version u8 (1) | storage key template u8 (1: ECC NIST P-256, AES-128-CFB, owner hierarchy)
//   | public area length u16 | TPM2B_PUBLIC | private area length u16 | TPM2B_PRIVATE
//   | wrapped key: nonce (12) | encrypted data key (32) | tag (16)
// The wrap's associated data is KeyFile.wrapData: the key id, kind, number and everything of
// the body before the wrapped key, so an object sealed for another unlocker or file is refused.
import SecretMemory
package import TransferCrypto

/// A TPM unlocker's body: the sealed wrapping key and the data key it wraps.
struct TPMUnlocker: Equatable {
  static let version: UInt8 = 1
  /// ``TPMTemplates/storageKey()``, the only template so far.
  static let storageKeyTemplate: UInt8 = 1
  static let wrappedLength = DataKey.length + DataKey.sealOverhead

  var sealed: TPMSealedObject
  var wrappedKey: [UInt8]

  /// The body before the wrapped key: what the wrap authenticates.
  var parameterBytes: [UInt8] {
    var writer = LittleEndianWriter()
    writer.write(Self.version)
    writer.write(Self.storageKeyTemplate)
    writer.write(UInt16(sealed.publicArea.count))
    writer.write(sealed.publicArea)
    writer.write(UInt16(sealed.privateArea.count))
    writer.write(sealed.privateArea)
    return writer.bytes
  }

  init(sealed: TPMSealedObject, wrappedKey: [UInt8]) {
    (self.sealed, self.wrappedKey) = (sealed, wrappedKey)
  }

  /// Reads a body; nil when it is not one this code writes.
  init?(body: [UInt8]) {
    var reader = LittleEndianReader(body[...])
    guard reader.read(UInt8.self) == Self.version, reader.read(UInt8.self) == Self.storageKeyTemplate,
      let publicLength = reader.read(UInt16.self), let publicArea = reader.read(count: Int(publicLength)),
      let privateLength = reader.read(UInt16.self), let privateArea = reader.read(count: Int(privateLength)),
      let wrapped = reader.read(count: Self.wrappedLength), reader.isAtEnd
    else { return nil }
    sealed = TPMSealedObject(publicArea: Array(publicArea), privateArea: Array(privateArea))
    wrappedKey = Array(wrapped)
  }
}

extension KeyFile {
  /// Adds a TPM unlocker for `dataKey`, which must be this file's: a new wrapping key sealed by
  /// the TPM that `tcti` names (nil: tpm2-tss's default) wraps it. Returns the unlocker's
  /// number. Records are not touched. Blocks until the TPM answers.
  @discardableResult
  package mutating func addTPM(for dataKey: DataKey, tcti: String?) throws(KeyFileError) -> UInt32 {
    guard isKey(dataKey) else { throw .wrongDataKey }
    let number = nextUnlockerNumber
    let wrappingKey: DataKey
    do throws(SealingError) { wrappingKey = try DataKey.random() } catch { throw .sealing(error) }
    let sealed: TPMSealedObject
    do throws(TPMError) { sealed = try TPMSealing.seal(wrappingKey.bytes, tcti: tcti) } catch {
      throw .tpm(number: nil, error)
    }
    let parameters = TPMUnlocker(sealed: sealed, wrappedKey: []).parameterBytes
    do throws(SealingError) {
      let wrapped = try wrappingKey.seal(
        dataKey.bytes, associatedData: wrapData(kind: .tpm2, number: number, parameters: parameters))
      add(Unlocker(kind: .tpm2, number: number, body: parameters + wrapped))
    } catch {
      throw .sealing(error)
    }
    return number
  }

  /// The data key, from the first TPM unlocker that the TPM `tcti` names opens, and that
  /// unlocker's number. When none does, throws why the first one did not. Reading the file
  /// changes nothing. Blocks until the TPM answers.
  package func unlockWithTPM(tcti: String?) throws(KeyFileError) -> (dataKey: DataKey, number: UInt32) {
    let candidates = unlockers.filter { $0.kind == .tpm2 }
    var firstFailure: KeyFileError?
    for unlocker in candidates {
      do throws(KeyFileError) {
        return (try open(tpmUnlocker: unlocker, tcti: tcti), unlocker.number)
      } catch {
        // With no TPM to ask, the others cannot open either.
        if case .tpm(_, .unreachable) = error { throw error }
        firstFailure = firstFailure ?? error
      }
    }
    throw firstFailure ?? .noUnlocker(.tpm2)
  }

  private func open(tpmUnlocker unlocker: Unlocker, tcti: String?) throws(KeyFileError) -> DataKey {
    guard let body = TPMUnlocker(body: unlocker.body) else {
      throw .malformed(path: "key file", reason: "TPM unlocker \(unlocker.number) unreadable")
    }
    let unsealed: SecretBytes
    do throws(TPMError) { unsealed = try TPMSealing.unseal(body.sealed, tcti: tcti) } catch {
      throw .tpm(number: unlocker.number, error)
    }
    let dataKey: DataKey
    do throws(SealingError) {
      let wrappingKey = try DataKey(bytes: unsealed)
      dataKey = try DataKey(
        bytes: try wrappingKey.open(
          body.wrappedKey,
          associatedData: wrapData(kind: .tpm2, number: unlocker.number, parameters: body.parameterBytes)))
    } catch .refused {
      throw .malformed(
        path: "key file",
        reason: "TPM unlocker \(unlocker.number)'s wrapped key does not open with the key its TPM unsealed: it was "
          + "changed since it was sealed")
    } catch {
      throw .sealing(error)
    }
    guard isKey(dataKey) else { throw .wrongDataKey }
    return dataKey
  }
}
