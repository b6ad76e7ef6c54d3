// Which of the items a search found an address names: their attributes as the connection's
// mirror knows them (ItemMirror.swift), the rest read together in one round trip, with the
// secret of the only candidate when a read needs one.
import GLibBridge
import SecretAddress

extension ServiceHandle {
  /// The items among `paths` that `address` names (`AddressRule`), in order, with their
  /// attributes; items gone meanwhile are left out. At most one round trip.
  func namedItems(_ paths: [String], by address: [String: String]) throws(SecretError)
    -> [(path: String, attributes: [String: String])]
  {
    guard !paths.isEmpty else { return [] }
    let known = try attributes(of: paths, asking: knownProvider).known
    return paths.compactMap { path in
      known[path].flatMap { AddressRule.isNamed($0, by: address) ? (path, $0) : nil }
    }
  }

  /// The first item among the unlocked `paths` that `address` names, with its secret (nil
  /// when it went or was locked meanwhile). One round trip when the mirror knows which item
  /// it is or only one may be; two otherwise.
  func firstNamedSecret(_ paths: [String], by address: [String: String]) throws(SecretError)
    -> (path: String, secret: SecretValue?)?
  {
    let known = mirror.attributes(of: paths)
    let candidates = paths.filter { known[$0].map { AddressRule.isNamed($0, by: address) } ?? true }
    guard let first = candidates.first else { return nil }
    return try inTransferSession { session throws(SecretError) in
      let guess = candidates.count == 1 ? getSecretsCall([first], in: session) : nil
      // The bus's word on a new session's provider comes in the same round trip.
      let vouching = vouchingCall(for: session)
      var (known, answers) = try attributes(
        of: candidates, asking: session.provider, alongside: [vouching, guess].compactMap { $0 }
      ) { agreeKey(of: session) }
      if vouching != nil, !answers.isEmpty { _ = try? credentials(of: session.provider, from: answers.removeFirst()) }
      let guessed = guess == nil ? nil : answers.first
      guard let path = candidates.first(where: { known[$0].map { AddressRule.isNamed($0, by: address) } ?? false })
      else { return nil }
      let answer = guessed.flatMap { path == first ? $0 : nil } ?? callAll([getSecretsCall([path], in: session)])[0]
      return (path, try secrets(in: answer.get(), of: session)[path])
    }
  }

  /// The attributes of the items at `paths` that the mirror knows, and those it does not read
  /// from `provider` in one round trip together with `extras`, whose answers are returned (none
  /// when nothing was sent); `work` runs while the answers travel.
  private func attributes(
    of paths: [String], asking provider: String, alongside extras: [BusCall] = [], meanwhile work: () -> Void = {}
  ) throws(SecretError) -> (known: [String: [String: String]], extras: [Result<Variant, SecretError>]) {
    let mark = mirror.mark()
    var known = mirror.attributes(of: paths)
    let unknown = paths.filter { known[$0] == nil }
    let calls = unknown.map { attributesCall($0, to: provider) } + extras
    guard !calls.isEmpty else {
      work()
      return (known, [])
    }
    var answers = callAll(calls, meanwhile: work).answers
    let extraAnswers = Array(answers[unknown.count...])
    answers.removeLast(extras.count)
    var read: [String: [String: String]] = [:]
    for (path, answer) in zip(unknown, answers) {
      guard let reply = try Self.unlessGone(answer) else { continue }
      guard let attributes = reply.child(0)?.unboxed?.stringDictionary else {
        throw Self.badReply("the Attributes of \(path) are not a{ss}")
      }
      read[path] = attributes
    }
    mirror.learn(read, since: mark)
    known.merge(read) { $1 }
    return (known, extraAnswers)
  }
}
