// Files that are memory: memfd_secret(2) (out of the kernel's direct map) and sealable memfds,
// their size and seals, and shared mappings of them.
import CSystemCalls
import Glibc

extension FileDescriptor {
  /// A new file of secret memory: its pages are removed from the kernel's direct map, so no
  /// other process (root included) can read them through /proc/PID/mem, and they are never
  /// swapped; mapping it counts against RLIMIT_MEMLOCK. Closes on exec. Its size can be set
  /// once. Wraps memfd_secret(2).
  package static func secretMemory() throws(Errno) -> FileDescriptor {
    FileDescriptor(rawValue: try retryingOnInterrupt { secretd_memfd_secret() })
  }

  /// A new file of ordinary memory named `name` (for /proc), which can be sealed. Closes on
  /// exec. Wraps memfd_create(2) with MFD_ALLOW_SEALING.
  package static func sealableMemory(name: String) throws(Errno) -> FileDescriptor {
    FileDescriptor(rawValue: try retryingOnInterrupt { secretd_memfd_sealable(name) })
  }

  /// Sets the file's size. Wraps ftruncate(2).
  package func setSize(_ count: Int) throws(Errno) {
    _ = try retryingOnInterrupt { ftruncate(rawValue, off_t(count)) }
  }

  /// The file's size in bytes. Wraps fstat(2).
  package func size() throws(Errno) -> Int {
    var status = stat()
    _ = try retryingOnInterrupt { fstat(rawValue, &status) }
    return Int(status.st_size)
  }

  /// Seals the file's size: it can neither shrink nor grow, and no seal can be added or
  /// removed. Wraps fcntl(2) F_ADD_SEALS.
  package func sealSize() throws(Errno) {
    _ = try retryingOnInterrupt { secretd_seal_size(rawValue) }
  }

  /// Whether the file cannot shrink (a sealed memfd). Wraps fcntl(2) F_GET_SEALS.
  package var cannotShrink: Bool {
    let seals = secretd_seals(rawValue)
    return seals >= 0 && seals & secretd_seal_shrink_flag() != 0
  }

  /// Maps `count` bytes of the file from its start, readable and writable, shared with every
  /// other mapping of it. Wraps mmap(2) with MAP_SHARED.
  package func mapShared(_ count: Int) throws(Errno) -> UnsafeMutableRawPointer {
    let mapped = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_SHARED, rawValue, 0)
    guard let pointer = mapped, pointer != MAP_FAILED else { throw .current }
    return pointer
  }
}

extension Memory {
  /// Keeps the pages in memory as they are first touched, never swapped. Fails when the process
  /// may lock no more (RLIMIT_MEMLOCK counts the whole range). Wraps mlock2(2) with MLOCK_ONFAULT.
  package static func lockOnFault(_ pointer: UnsafeMutableRawPointer, count: Int) throws(Errno) {
    guard secretd_lock_on_fault(pointer, count) == 0 else { throw .current }
  }
}
