// Key pairs made ahead, on a thread of their own: a pair costs one exponentiation in libgcrypt
// (about 0.2 ms here), which would otherwise come before an `OpenSession` could be sent or
// answered. The private exponent lives in libgcrypt's secure memory, as one made on the spot
// would.
import Synchronization
import SystemCalls

package final class KeyPairReserve: Sendable {
  /// The pair made ahead; held while the thread makes it.
  private let spare = Mutex<DiffieHellman.KeyPair?>(nil)
  /// Wakes a refilling thread after a take; nil for a reserve of one pair.
  private let wake: NativeSemaphore?

  /// Starts making a pair at once: one only, or (`refilling`) a new one each time the last is
  /// taken.
  package init(refilling: Bool) {
    wake = refilling ? NativeSemaphore() : nil
    Gcrypt.initialize()
    NativeThread.detach(name: "key-pairs") { [self] in
      refill()
      guard let wake else { return }
      while true {
        wake.wait()
        refill()
      }
    }
  }

  /// The pair made ahead, or a new one made now when none is ready or it is still being made
  /// (a pair is never handed out twice).
  package func take() throws(CryptoError) -> DiffieHellman.KeyPair {
    let ready = spare.withLockIfAvailable { $0.take() } ?? nil
    wake?.signal()
    if let ready { return ready }
    return try DiffieHellman.makeKeyPair()
  }

  /// None when libgcrypt cannot make one: the next `take()` tries itself and reports why.
  private func refill() {
    spare.withLock { if $0 == nil { $0 = try? DiffieHellman.makeKeyPair() } }
  }
}
