// Locked memory for secrets and session keys: the only place that maps, locks and unmaps memory
// (through SystemCalls' `Memory`).
import Synchronization
import SystemCalls

/// An allocator of locked, non-dumpable memory.
///
/// Pages come from `mmap`, are pinned with `mlock` (never swapped) and marked `MADV_DONTDUMP`
/// (left out of core dumps). Blocks are handed out in power-of-two size classes from 64 KiB
/// slabs; larger blocks get their own mapping. Every block is wiped with `explicit_bzero`
/// when it is freed, before it can be reused. Calls run on several threads, so the state sits
/// behind a `Mutex`.
///
/// When the kernel refuses to lock more memory (RLIMIT_MEMLOCK), the allocation fails and the
/// caller reports ``CryptoError/outOfSecureMemory``, unless ``allowUnlocked`` says secrets may
/// live in memory that could be swapped.
enum SecureMemory {
  static let slabSize = 64 * 1024
  static let smallestClass = 32

  struct State: ~Copyable {
    /// Free blocks by size class, as addresses (plain integers keep the state Sendable).
    var freeLists: [[UInt]] = Array(repeating: [], count: 12)
    var warnedUnlocked = false
    /// Why the last block could not be mapped or locked.
    var lastFailure: String?
  }

  static let state = Mutex(State())
  /// Set once at start from `--allow-unlocked-memory`.
  static let allowUnlocked = Atomic<Bool>(false)

  /// Why a secret cannot be held, for error messages.
  static var exhaustedAdvice: String {
    let limit = ResourceLimits.lockedMemory.map { "\($0) bytes" } ?? "unlimited"
    let failure = state.withLock { $0.lastFailure } ?? "no memory"
    return "out of locked memory for secrets (\(failure); RLIMIT_MEMLOCK is \(limit)): raise LimitMEMLOCK= "
      + "in the unit, or ulimit -l, or start secretd with --allow-unlocked-memory"
  }

  static func sizeClass(for count: Int) -> Int? {
    var size = smallestClass
    var index = 0
    while size < count {
      size <<= 1
      index += 1
    }
    return size <= slabSize ? index : nil
  }

  /// Maps, locks and marks non-dumpable `count` bytes.
  static func mapLocked(_ count: Int, state: inout State) -> UInt? {
    let pointer: UnsafeMutableRawPointer
    do throws(Errno) { pointer = try Memory.mapAnonymous(count) } catch {
      state.lastFailure = "mmap: \(error)"
      return nil
    }
    Memory.excludeFromCoreDumps(pointer, count: count)
    do throws(Errno) { try Memory.lock(pointer, count: count) } catch {
      guard allowUnlocked.load(ordering: .relaxed) else {
        state.lastFailure = "mlock: \(error)"
        Memory.unmap(pointer, count: count)
        return nil
      }
      if !state.warnedUnlocked {
        state.warnedUnlocked = true
        Log.warning("could not lock secret memory (mlock: \(error)); secrets may be swapped (--allow-unlocked-memory)")
      }
    }
    return UInt(bitPattern: pointer)
  }

  /// A wiped block of at least `count` bytes; nil when no more memory can be mapped or locked.
  static func allocate(_ count: Int) -> (pointer: UnsafeMutableRawPointer, capacity: Int)? {
    let wanted = max(count, 1)
    let block = state.withLock { state -> (UInt, Int)? in
      guard let index = sizeClass(for: wanted) else {
        let pageSize = Memory.pageSize
        let rounded = (wanted + pageSize - 1) / pageSize * pageSize
        guard let pointer = mapLocked(rounded, state: &state) else { return nil }
        return (pointer, rounded)
      }
      let size = smallestClass << index
      if let block = state.freeLists[index].popLast() { return (block, size) }
      guard let slab = mapLocked(slabSize, state: &state) else { return nil }
      var offset = size
      while offset < slabSize {
        state.freeLists[index].append(slab + UInt(offset))
        offset += size
      }
      return (slab, size)
    }
    guard let block, let pointer = UnsafeMutableRawPointer(bitPattern: block.0) else { return nil }
    return (pointer, block.1)
  }

  /// Wipes and returns a block.
  static func free(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
    Memory.wipe(UnsafeMutableRawBufferPointer(start: pointer, count: capacity))
    let address = UInt(bitPattern: pointer)
    let unmap = state.withLock { state -> Bool in
      guard let index = sizeClass(for: capacity), capacity == smallestClass << index else { return true }
      state.freeLists[index].append(address)
      return false
    }
    if unmap {
      Memory.unlock(pointer, count: capacity)
      Memory.unmap(pointer, count: capacity)
    }
  }
}

/// Secret bytes in locked memory, wiped when the buffer is released.
///
/// A class so that items and sessions can hold one without copying; no API hands its bytes
/// out as a Swift array.
final class SecureBuffer: @unchecked Sendable {
  // SAFETY: the bytes are written only while the buffer is being made (copied in, decrypted,
  // truncated) by the one thread that made it; once stored or shared it is only read, and its
  // memory is wiped and returned exactly once, in deinit, when no thread holds it any more.
  private let pointer: UnsafeMutableRawPointer
  private let capacity: Int
  /// The number of meaningful bytes.
  private(set) var count: Int

  /// A zero-filled buffer of `count` bytes; nil when memory is exhausted.
  init?(count: Int) {
    guard let block = SecureMemory.allocate(count) else { return nil }
    self.pointer = block.pointer
    self.capacity = block.capacity
    self.count = count
  }

  /// A copy of `bytes` in locked memory.
  convenience init?(copying bytes: UnsafeRawBufferPointer) {
    self.init(count: bytes.count)
    if let base = bytes.baseAddress, bytes.count > 0 {
      pointer.copyMemory(from: base, byteCount: bytes.count)
    }
  }

  deinit { SecureMemory.free(pointer, capacity: capacity) }

  func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeRawBufferPointer(start: pointer, count: count))
  }

  func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
  }

  /// Shortens the buffer, wiping the bytes cut off.
  func truncate(to newCount: Int) {
    guard newCount < count, newCount >= 0 else { return }
    Memory.wipe(UnsafeMutableRawBufferPointer(start: pointer + newCount, count: count - newCount))
    count = newCount
  }

  /// Compares in constant time for equal lengths.
  func isEqual(to other: SecureBuffer) -> Bool {
    guard count == other.count else { return false }
    var difference: UInt8 = 0
    withUnsafeBytes { a in
      other.withUnsafeBytes { b in
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
      }
    }
    return difference == 0
  }
}
