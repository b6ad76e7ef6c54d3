// A DH key pair made ahead, so that OpenSession costs one exponentiation instead of two: libgcrypt
// takes about 0.2 ms for each, and an OpenSession is the first call of almost every client.
// A thread of its own makes the next pair once one is taken. The private exponent lives in
// libgcrypt's secure memory, as one made during the call would.
import Synchronization
import SystemCalls
import TransferCrypto

final class SpareKeyPair: Sendable {
  static let shared = SpareKeyPair()

  /// The pair made ahead; held while the thread makes it.
  private let spare = Mutex<DiffieHellman.KeyPair?>(nil)
  private let started = Mutex(false)
  private let wake = NativeSemaphore()

  private init() {}

  /// The pair made ahead, or a new one when none is ready (or it is being made); the next is
  /// made meanwhile.
  func take() throws(CryptoError) -> DiffieHellman.KeyPair {
    let ready = spare.withLockIfAvailable { $0.take() } ?? nil
    startOrWake()
    if let ready { return ready }
    return try DiffieHellman.makeKeyPair()
  }

  private func startOrWake() {
    let start = started.withLock { started in
      defer { started = true }
      return !started
    }
    if start { NativeThread.detach(name: "secretd-key-pair") { [self] in work() } }
    wake.signal()
  }

  private func work() -> Never {
    while true {
      wake.wait()
      // None when libgcrypt cannot make one: the next OpenSession tries itself and reports why.
      spare.withLock { if $0 == nil { $0 = try? DiffieHellman.makeKeyPair() } }
    }
  }
}
