// The cost of turning a passphrase into a key (Argon2id), stored beside the key it wraps.

/// Argon2id's salt and costs, as a passphrase unlocker stores them.
package struct Argon2Parameters: Equatable, Sendable {
  /// Passes over the memory (Argon2's t).
  package var iterations: UInt32
  /// Memory in KiB (Argon2's m).
  package var memoryKiB: UInt32
  /// Lanes (Argon2's p); libgcrypt computes them one after another on the calling thread.
  package var parallelism: UInt32
  /// Random, 16 to 64 bytes; a new one for each unlocker.
  package var salt: [UInt8]

  package init(iterations: UInt32, memoryKiB: UInt32, parallelism: UInt32, salt: [UInt8]) {
    (self.iterations, self.memoryKiB, self.parallelism, self.salt) = (iterations, memoryKiB, parallelism, salt)
  }

  /// RFC 9106's second recommended choice, for memory-constrained uses: 3 passes over 64 MiB in
  /// 4 lanes (KeePassXC's default is also 64 MiB; oo7 and gnome-keyring use PBKDF2), with a new
  /// 32-byte salt.
  package static func standard() -> Argon2Parameters {
    Argon2Parameters(iterations: 3, memoryKiB: 64 * 1024, parallelism: 4, salt: newSalt())
  }

  /// The least cost, for tests only: one pass over 64 KiB.
  package static func fastForTests() -> Argon2Parameters {
    Argon2Parameters(iterations: 1, memoryKiB: 64, parallelism: 1, salt: newSalt())
  }

  /// A new random salt of 32 bytes.
  package static func newSalt() -> [UInt8] {
    var salt = [UInt8](repeating: 0, count: 32)
    salt.withUnsafeMutableBytes { SealingCalls.randomize($0) }
    return salt
  }

  /// Whether the values are ones this code would ever write, so that a damaged or crafted
  /// file cannot make unlocking take forever or exhaust memory (at most 4 GiB, 64 passes).
  package var isPlausible: Bool {
    (1...64).contains(iterations) && (1...64).contains(parallelism)
      && memoryKiB >= 8 * parallelism && memoryKiB <= 4 * 1024 * 1024 && (16...64).contains(salt.count)
  }
}
