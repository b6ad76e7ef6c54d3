// Memory the process maps itself: pages kept out of swap and core dumps, and bytes wiped so
// that the optimiser cannot skip it.
import Glibc

package enum Memory {
  /// The size of a page in bytes. Wraps sysconf(3) with _SC_PAGESIZE.
  package static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

  /// Overwrites the bytes with zeros, in a way the optimiser may not remove because they are
  /// not read afterwards. Wraps explicit_bzero(3).
  package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    explicit_bzero(base, buffer.count)
  }

  /// Maps `count` bytes of fresh, zero-filled memory of this process alone, readable and
  /// writable. Wraps mmap(2) with MAP_PRIVATE | MAP_ANONYMOUS.
  package static func mapAnonymous(_ count: Int) throws(Errno) -> UnsafeMutableRawPointer {
    let mapped = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    guard let pointer = mapped, pointer != MAP_FAILED else { throw .current }
    return pointer
  }

  /// Returns a mapping made by ``mapAnonymous(_:)``. Wraps munmap(2).
  package static func unmap(_ pointer: UnsafeMutableRawPointer, count: Int) {
    _ = munmap(pointer, count)
  }

  /// Keeps the pages in memory: they are never swapped to disk. Fails when the process may
  /// lock no more (RLIMIT_MEMLOCK). Wraps mlock(2).
  package static func lock(_ pointer: UnsafeMutableRawPointer, count: Int) throws(Errno) {
    guard mlock(pointer, count) == 0 else { throw .current }
  }

  /// Lets the pages be swapped again. Wraps munlock(2).
  package static func unlock(_ pointer: UnsafeMutableRawPointer, count: Int) {
    _ = munlock(pointer, count)
  }

  /// Leaves the pages out of core dumps; best effort. Wraps madvise(2) with MADV_DONTDUMP.
  package static func excludeFromCoreDumps(_ pointer: UnsafeMutableRawPointer, count: Int) {
    _ = madvise(pointer, count, MADV_DONTDUMP)
  }
}
