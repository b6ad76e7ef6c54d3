// What the fuzzer knows an answer must be: a call built to be refused is refused, and a secret
// read back through one of the caller's sessions is the one the fuzzer last stored in that item.
import GLibBridge
import TransferCrypto

@testable import SecretDaemon

struct FuzzOracle {
  /// Answers found right: refusals of calls built to be refused, and secrets read back.
  private(set) var refusalsChecked = 0
  private(set) var secretsChecked = 0
  private(set) var wrongAnswers: [String] = []

  mutating func check(_ call: FuzzCall, _ outcome: Result<Variant, GLibError>, targets: FuzzTargets) {
    switch outcome {
    case .failure:
      if call.mustFail != nil { refusalsChecked += 1 }
    case .success(let reply):
      if let reason = call.mustFail {
        wrongAnswers.append("\(call.name) on \(call.path) succeeded, though \(reason)")
        return
      }
      guard let session = call.readingSession else { return }
      switch (call.interface, call.member) {
      case (Interfaces.item, "GetSecret"):
        check(secret: reply.child(0), of: call.path, session, targets)
      case (Interfaces.service, "GetSecrets"):
        for entry in reply.child(0)?.elements ?? [] {
          check(secret: entry.child(1), of: entry.child(0)?.string ?? "", session, targets)
        }
      default:
        break
      }
    }
  }

  /// Compares `secret`, the answer for `item`, with what the item holds, when the fuzzer knows.
  private mutating func check(
    secret: Variant?, of item: String, _ session: FuzzTargets.Session, _ targets: FuzzTargets
  ) {
    guard let expected = targets.secrets[targets.canonical(item)] else { return }
    secretsChecked += 1
    guard let secret, secret.child(0)?.string == session.path, let read = Self.open(secret, session) else {
      wrongAnswers.append(
        "the secret of \(item) read through \(session.path) is \(secret?.typeString ?? "missing"), "
          + "and does not open with that session")
      return
    }
    guard read == expected else {
      wrongAnswers.append(
        "the secret of \(item) read through \(session.path) is \(read.bytes.count) bytes of "
          + "'\(read.contentType.prefix(40))', not the \(expected.bytes.count) bytes of "
          + "'\(expected.contentType.prefix(40))' last stored")
      return
    }
  }

  /// The bytes and content type of an (oayays) secret, opened with `session`'s key.
  private static func open(_ secret: Variant, _ session: FuzzTargets.Session) -> FuzzTargets.StoredSecret? {
    guard let parameters = secret.child(1)?.publicBytes, var value = secret.child(2)?.publicBytes,
      let contentType = secret.child(3)?.string
    else { return nil }
    guard let key = session.key else { return FuzzTargets.StoredSecret(bytes: value, contentType: contentType) }
    let ciphertext = value
    let count = try? ciphertext.withUnsafeBytes { ciphertext in
      try parameters.withUnsafeBytes { iv in
        try value.withUnsafeMutableBytes { try TransferCipher.decrypt(ciphertext, iv: iv, key: key, into: $0) }
      }
    }
    return count.map { FuzzTargets.StoredSecret(bytes: Array(value.prefix($0)), contentType: contentType) }
  }
}
