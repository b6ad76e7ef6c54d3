// The Secret Service's secret struct (oayays) as it crosses the bus, made and read here only.
import GLibBridge
import TransferCrypto

/// The (oayays) secret struct, both ways.
enum SecretWireFormat {
  /// A stored secret as `session` sends it: encrypted for DH; for `plain`, copied into the
  /// message's own buffer now, while the store is locked. What it returns holds no pointer to
  /// `secret`.
  static func make(
    _ secret: UnsafeRawBufferPointer, contentType: String, for session: TransferSession, at sessionPath: String
  ) throws(CryptoError) -> DBusValue {
    let parameters: [UInt8]
    let value: DBusValue
    switch try session.encode(secret) {
    case .plain: (parameters, value) = ([], .copyingBytes(secret))
    case .sealed(let iv, let ciphertext): (parameters, value) = (iv, .bytes(ciphertext))
    }
    return .tuple([.objectPath(sessionPath), .bytes(parameters), value, .string(contentType)])
  }

  /// The secret a client's (oayays) carries, to be decoded through the session it names (which
  /// the caller must own) straight into the store's record.
  static func read(
    _ secret: Variant, daemon: Daemon, context: CallContext
  ) throws -> (secret: SecretSource, contentType: String) {
    guard let sessionPath = secret.child(0)?.string, let parameters = secret.child(1), let value = secret.child(2),
      let contentType = secret.child(3)?.string
    else { throw DBusError.invalidArgs("a secret is (oayays): session, parameters, value, content type") }
    let session: TransferSession
    do {
      session = try daemon.session(at: sessionPath, caller: context.sender)
    } catch {
      // Refused, the value may still be a secret in clear: scrubbed all the same.
      context.receivedPlainSecret = true
      throw error
    }
    if session.algorithm == .plain { context.receivedPlainSecret = true }
    // Refused before decoding, so an oversized secret never takes memory; the store checks the
    // exact size of the plaintext. A cipher pads it by at most one block.
    let limit = daemon.store.limits.maxSecretSize
    let smallestPlaintext = value.childCount - AES128CBC.blockSize
    if smallestPlaintext > limit {
      throw StoreError.limitExceeded(.secretSize, actual: smallestPlaintext, maximum: limit)
    }
    let source = SecretSource.sent(maximumCount: value.childCount) { (destination) throws(CryptoError) -> Int in
      let decoded = parameters.withBytes { parameterBytes in
        value.withBytes { valueBytes in
          Result { () throws(CryptoError) -> Int in
            try session.decode(parameters: parameterBytes, value: valueBytes, into: destination)
          }
        }
      }
      guard case .some(.some(let result)) = decoded else {
        throw .library("secret parameters and value are ay")
      }
      return try result.get()
    }
    return (source, contentType)
  }
}
