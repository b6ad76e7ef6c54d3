// Transfer sessions: how secrets cross the bus for one client connection.
import SecretMemory
import Synchronization
import TransferCrypto

/// Why a session could not be opened or used.
enum SessionError: Error, Equatable {
  case unsupportedAlgorithm(String)
  case invalidInput(String)
  /// The session of this number is not open, or not the caller's.
  case noSession(Int)
  case tooManySessions(total: Int, owned: Int)
  case crypto(CryptoError)
}

/// A stored secret prepared for a client: sent as it is (a `plain` session, whose caller copies
/// it into the message), or encrypted with the IV that goes with it.
enum EncodedSecret {
  case plain
  case sealed(iv: [UInt8], ciphertext: [UInt8])
}

/// One negotiated session, owned by the connection that opened it.
final class TransferSession: Sendable {
  enum Algorithm: String {
    case plain
    case dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
  }

  let number: Int
  let owner: String
  let algorithm: Algorithm
  /// The AES key in locked memory; nil for `plain` and once closed. A call that took the key
  /// before the session closed finishes with it; the key is wiped when that call lets it go.
  private let key: Mutex<SecretBytes?>

  init(number: Int, owner: String, algorithm: Algorithm, key: SecretBytes?) {
    self.number = number
    self.owner = owner
    self.algorithm = algorithm
    self.key = Mutex(key)
  }

  /// Drops (and so wipes) the key.
  func close() { key.withLock { $0 = nil } }

  private var currentKey: SecretBytes? { key.withLock { $0 } }

  /// Writes what the client sent (`value`, with the IV `parameters` for DH) as plain bytes into
  /// `destination`, which holds at least `value.count` bytes; returns how many it wrote.
  func decode(
    parameters: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
  ) throws(CryptoError) -> Int {
    switch algorithm {
    case .plain:
      UnsafeMutableRawBufferPointer(rebasing: destination[0..<value.count]).copyMemory(from: value)
      return value.count
    case .dh:
      guard let key = currentKey else { throw .library("session is closed") }
      return try TransferCipher.decrypt(value, iv: parameters, key: key, into: destination)
    }
  }

  /// Prepares a stored secret for the client; what it returns holds no pointer to `secret`.
  func encode(_ secret: UnsafeRawBufferPointer) throws(CryptoError) -> EncodedSecret {
    switch algorithm {
    case .plain:
      return .plain
    case .dh:
      guard let key = currentKey else { throw .library("session is closed") }
      let sealed = try TransferCipher.encrypt(secret, key: key)
      return .sealed(iv: sealed.iv, ciphertext: sealed.ciphertext)
    }
  }
}

/// Every open session, by number and by owning connection. Thread-safe.
///
/// A client may keep `maxPerClient` sessions; opening one more closes its least recently used
/// session, so a client that opens a session per item (python secretstorage does) can go on for
/// ever, and a session in use is never the one closed. All clients together keep at most
/// `maxTotal`: past it, a new session closes the least recently used one of the client holding
/// the most, unless the client asking already holds as many as any other, which is refused. So
/// no number of connections can take every session, and a newcomer always gets one.
final class SessionRegistry: Sendable {
  private struct State {
    var sessions: [Int: TransferSession] = [:]
    /// Each owner's sessions, with when each was last used.
    var byOwner: [String: [Int: UInt64]] = [:]
    var nextNumber = 1
    var clock: UInt64 = 0
  }

  private let state = Mutex(State())
  let maxPerClient: Int
  let maxTotal: Int

  init(maxPerClient: Int, maxTotal: Int) {
    self.maxPerClient = maxPerClient
    self.maxTotal = maxTotal
  }

  /// Session numbers, for introspection.
  var numbers: [Int] { state.withLock { $0.sessions.keys.sorted() } }

  /// Opens a session for `owner`, given the client's public key for DH; returns it and the
  /// server's public key (nil for plain). A client refused for holding its share is refused
  /// before any key is made; the key agreement runs outside the lock.
  func open(algorithm name: String, clientKey: UnsafeRawBufferPointer?, owner: String) throws(SessionError) -> (
    TransferSession, serverKey: [UInt8]?
  ) {
    guard let algorithm = TransferSession.Algorithm(rawValue: name) else { throw .unsupportedAlgorithm(name) }
    try state.withLock { state throws(SessionError) in _ = try room(for: owner, in: &state, evict: false) }
    let (key, serverKey) = try Self.agree(algorithm, clientKey)
    let (session, evicted) = try state.withLock { state throws(SessionError) -> (TransferSession, TransferSession?) in
      let evicted = try room(for: owner, in: &state, evict: true)
      let session = TransferSession(number: state.nextNumber, owner: owner, algorithm: algorithm, key: key)
      state.nextNumber += 1
      state.clock += 1
      state.sessions[session.number] = session
      state.byOwner[owner, default: [:]][session.number] = state.clock
      return (session, evicted)
    }
    evicted?.close()
    return (session, serverKey)
  }

  /// Makes room for one more session of `owner` (with `evict`, by removing the session that
  /// gives way, returned); throws when `owner` must be refused.
  private func room(for owner: String, in state: inout State, evict: Bool) throws(SessionError) -> TransferSession? {
    let owned = state.byOwner[owner] ?? [:]
    var victim: Int?
    if owned.count >= maxPerClient {
      victim = Self.leastRecentlyUsed(owned)
    } else if state.sessions.count >= maxTotal {
      let largest = state.byOwner.filter { $0.key != owner }.max { $0.value.count < $1.value.count }
      guard let largest, largest.value.count > owned.count + 1 else {
        throw .tooManySessions(total: maxTotal, owned: owned.count)
      }
      victim = Self.leastRecentlyUsed(largest.value)
    }
    guard evict, let victim else { return nil }
    return Self.remove(victim, from: &state)
  }

  private static func leastRecentlyUsed(_ owned: [Int: UInt64]) -> Int? {
    owned.min { $0.value < $1.value }?.key
  }

  /// The key and the server's public key of a key agreement for `algorithm`.
  private static func agree(
    _ algorithm: TransferSession.Algorithm, _ clientKey: UnsafeRawBufferPointer?
  ) throws(SessionError) -> (SecretBytes?, [UInt8]?) {
    switch algorithm {
    case .plain:
      return (nil, nil)
    case .dh:
      guard let clientKey else {
        throw .invalidInput("the DH input must be a byte array (ay) holding the client's public key")
      }
      do throws(CryptoError) {
        let result = try KeyAgreement.respond(toClientKey: clientKey)
        return (result.aesKey, result.serverPublicKey)
      } catch {
        throw .crypto(error)
      }
    }
  }

  /// The session `number` if `caller` owns it; marks it used.
  func session(_ number: Int, caller: String) throws(SessionError) -> TransferSession {
    let session = state.withLock { state -> TransferSession? in
      guard let session = state.sessions[number], session.owner == caller else { return nil }
      state.clock += 1
      state.byOwner[caller]?[number] = state.clock
      return session
    }
    guard let session else { throw .noSession(number) }
    return session
  }

  /// Closes the session `number`, which `caller` must own.
  func close(_ number: Int, caller: String) throws(SessionError) {
    let session = try self.session(number, caller: caller)
    state.withLock { state in _ = Self.remove(session.number, from: &state) }
    session.close()
  }

  /// Closes every session of a client that left the bus.
  func closeAll(ownedBy owner: String) {
    let closed = state.withLock { state -> [TransferSession] in
      let numbers = state.byOwner.removeValue(forKey: owner)?.keys ?? [:].keys
      return numbers.compactMap { state.sessions.removeValue(forKey: $0) }
    }
    for session in closed { session.close() }
  }

  /// How many sessions `owner` has open.
  func count(ownedBy owner: String) -> Int { state.withLock { $0.byOwner[owner]?.count ?? 0 } }

  /// How many sessions all clients have open.
  var count: Int { state.withLock { $0.sessions.count } }

  private static func remove(_ number: Int, from state: inout State) -> TransferSession? {
    guard let session = state.sessions.removeValue(forKey: number) else { return nil }
    state.byOwner[session.owner]?[number] = nil
    if state.byOwner[session.owner]?.isEmpty == true { state.byOwner[session.owner] = nil }
    return session
  }
}
