// Locked memory for secret bytes, in every process of the package: the only place that maps,
// locks and unmaps memory (through SystemCalls' `Memory`).
package import Synchronization
import SystemCalls

/// An allocator of locked, non-dumpable memory.
///
/// Pages come from `mmap`, are pinned with `mlock` (never swapped) and marked `MADV_DONTDUMP`
/// (left out of core dumps). Blocks are handed out in power-of-two size classes, cut on demand
/// from one 64 KiB slab at a time that every class shares: a program that keeps three small
/// secrets locks one slab, not one per class, and pays for no list of blocks it never uses (a
/// one-shot `secretctl get` starts faster). Larger blocks get their own mapping. Every block is
/// wiped with `explicit_bzero` when it is freed, before it can be reused. Calls run on several
/// threads, so the state sits behind a `Mutex`.
///
/// When the kernel refuses to lock more memory (RLIMIT_MEMLOCK), the allocation fails, unless
/// ``allowUnlocked`` says secrets may live in memory that could be swapped. A client would
/// rather hold its secret in unlocked memory than fail, so that is the default; secretd turns it
/// off unless started with `--allow-unlocked-memory`, and reports the failure.
package enum SecureMemory {
  static let slabSize = 64 * 1024
  static let smallestClass = 32

  struct State: ~Copyable {
    /// Free blocks by size class, as addresses (plain integers keep the state Sendable).
    var freeLists: [[UInt]] = Array(repeating: [], count: 12)
    /// What is left of the newest slab, not yet cut into blocks.
    var uncut: Range<UInt> = 0..<0
    var warnedUnlocked = false
    /// Why the last block could not be mapped or locked.
    var lastFailure: String?
  }

  static let state = Mutex(State())
  /// Whether a block the kernel would not lock is used unlocked rather than refused.
  package static let allowUnlocked = Atomic<Bool>(true)
  /// Told once, the first time a block is used unlocked, why it could not be locked.
  package static let unlockedWarning = Mutex<(@Sendable (String) -> Void)?>(nil)

  /// Why the last block could not be mapped or locked.
  package static var lastFailure: String? { state.withLock { $0.lastFailure } }

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
        unlockedWarning.withLock { $0?("mlock: \(error)") }
      }
    }
    return UInt(bitPattern: pointer)
  }

  /// A wiped block of at least `count` bytes; nil when no more memory can be mapped or locked.
  package static func allocate(_ count: Int) -> (pointer: UnsafeMutableRawPointer, capacity: Int)? {
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
      guard let block = cut(size, state: &state) else { return nil }
      return (block, size)
    }
    guard let block, let pointer = UnsafeMutableRawPointer(bitPattern: block.0) else { return nil }
    return (pointer, block.1)
  }

  /// A block of `size` (a size class) cut from the newest slab, or from a new one when it has
  /// too little left; what the old one had left goes to the free lists, in the largest blocks
  /// that fit. Blocks of one slab are cut in order, so each is aligned to the smallest class.
  private static func cut(_ size: Int, state: inout State) -> UInt? {
    if state.uncut.count < size {
      guard let slab = mapLocked(slabSize, state: &state) else { return nil }
      keepLeftover(of: state.uncut, state: &state)
      state.uncut = slab..<slab + UInt(slabSize)
    }
    let block = state.uncut.lowerBound
    state.uncut = block + UInt(size)..<state.uncut.upperBound
    return block
  }

  private static func keepLeftover(of leftover: Range<UInt>, state: inout State) {
    var start = leftover.lowerBound
    var index = state.freeLists.count - 1
    while index >= 0 {
      let size = UInt(smallestClass << index)
      if leftover.upperBound - start >= size {
        state.freeLists[index].append(start)
        start += size
      } else {
        index -= 1
      }
    }
  }

  /// Wipes and returns a block.
  package static func free(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
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
