// The passphrase unlocker: Argon2id turns the passphrase and a salt into a key that wraps the
// data key (AES-256-GCM). A wrong passphrase fails the tag and changes nothing. A login unlocker
// is the same with the login password (given by PAM at login, `secretctl pam-unlock`), of a kind
// of its own so that it is listed as such.
//
// Body, version 1 (integers little-endian):
//   algorithm u8 (1: Argon2id, version 0x13) | iterations u32 | memory KiB u32 | parallelism u32
//   | salt length u8 | salt | wrapped key: nonce (12) | encrypted data key (32) | tag (16)
// The wrap's associated data is KeyFile.wrapData: the key id, kind, number and everything of
// the body before the wrapped key.
package import SecretMemory
package import TransferCrypto

/// A passphrase unlocker's body: Argon2id's parameters and the data key they wrap.
struct PassphraseUnlocker: Equatable {
  static let argon2id: UInt8 = 1
  var parameters: Argon2Parameters
  var wrappedKey: [UInt8]

  static let wrappedLength = DataKey.length + DataKey.sealOverhead

  /// The body before the wrapped key: what the wrap authenticates.
  var parameterBytes: [UInt8] {
    var writer = LittleEndianWriter()
    writer.write(Self.argon2id)
    writer.write(parameters.iterations)
    writer.write(parameters.memoryKiB)
    writer.write(parameters.parallelism)
    writer.write(UInt8(parameters.salt.count))
    writer.write(parameters.salt)
    return writer.bytes
  }

  var body: [UInt8] { parameterBytes + wrappedKey }

  init(parameters: Argon2Parameters, wrappedKey: [UInt8]) {
    (self.parameters, self.wrappedKey) = (parameters, wrappedKey)
  }

  /// Reads a body; nil when it is not one this code writes (or its costs are implausible).
  init?(body: [UInt8]) {
    var reader = LittleEndianReader(body[...])
    guard reader.read(UInt8.self) == Self.argon2id, let iterations = reader.read(UInt32.self),
      let memory = reader.read(UInt32.self), let parallelism = reader.read(UInt32.self),
      let saltLength = reader.read(UInt8.self), let salt = reader.read(count: Int(saltLength)),
      let wrapped = reader.read(count: Self.wrappedLength), reader.isAtEnd
    else { return nil }
    parameters = Argon2Parameters(
      iterations: iterations, memoryKiB: memory, parallelism: parallelism, salt: Array(salt))
    guard parameters.isPlausible else { return nil }
    wrappedKey = Array(wrapped)
  }
}

extension KeyFile {
  /// The kinds a passphrase opens.
  static let passphraseKinds: [UnlockerKind] = [.passphrase, .login]

  /// Adds a passphrase unlocker (of `kind`: `.passphrase` or `.login`) for `dataKey`, which
  /// must be this file's (its key check opens); returns the unlocker's number. Records are not
  /// touched.
  @discardableResult
  package mutating func addPassphrase(
    _ passphrase: SecretBytes, kind: UnlockerKind = .passphrase, for dataKey: DataKey,
    parameters: Argon2Parameters = .standard()
  ) throws(KeyFileError) -> UInt32 {
    guard isKey(dataKey) else { throw .wrongDataKey }
    guard Self.passphraseKinds.contains(kind) else { throw .noUnlocker(kind) }
    guard parameters.isPlausible else { throw .sealing(.malformed("implausible Argon2id parameters")) }
    let number = nextUnlockerNumber
    let unwrapped = PassphraseUnlocker(parameters: parameters, wrappedKey: [])
    do {
      let derived = try DataKey.derived(from: passphrase, parameters)
      let wrapped = try derived.seal(
        dataKey.bytes, associatedData: wrapData(kind: kind, number: number, parameters: unwrapped.parameterBytes))
      add(Unlocker(kind: kind, number: number, body: unwrapped.parameterBytes + wrapped))
    } catch {
      throw .sealing(error)
    }
    return number
  }

  /// The data key, from the first passphrase or login unlocker that `passphrase` opens. Throws
  /// ``KeyFileError/wrongPassphrase`` when none does; reading the file changes nothing.
  package func unlock(passphrase: SecretBytes) throws(KeyFileError) -> DataKey {
    let candidates = unlockers.filter { Self.passphraseKinds.contains($0.kind) }
    guard !candidates.isEmpty else { throw .noUnlocker(.passphrase) }
    for unlocker in candidates {
      guard let body = PassphraseUnlocker(body: unlocker.body) else {
        throw .malformed(path: "key file", reason: "passphrase unlocker \(unlocker.number) unreadable")
      }
      do {
        let derived = try DataKey.derived(from: passphrase, body.parameters)
        let key = try derived.open(
          body.wrappedKey,
          associatedData: wrapData(kind: unlocker.kind, number: unlocker.number, parameters: body.parameterBytes))
        let dataKey = try DataKey(bytes: key)
        guard isKey(dataKey) else { throw KeyFileError.wrongDataKey }
        return dataKey
      } catch SealingError.refused {
        continue
      } catch let error as SealingError {
        throw .sealing(error)
      } catch let error as KeyFileError {
        throw error
      } catch {
        throw .sealing(.malformed("\(error)"))
      }
    }
    throw .wrongPassphrase
  }
}
