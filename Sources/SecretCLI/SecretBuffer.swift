import SystemCalls

/// Bytes of a secret in memory this process owns, zeroed when they are replaced or released.
///
/// Growing copies into a new allocation and wipes the old one, so no stale copy is left behind
/// in freed memory, as `Array` growth would. Not copyable: one owner, one wipe.
struct SecretBuffer: ~Copyable {
  private var storage: UnsafeMutableRawBufferPointer
  private(set) var count = 0

  init(capacity: Int = 256) {
    storage = .allocate(byteCount: max(capacity, 16), alignment: 1)
  }

  deinit {
    Memory.wipe(storage)
    storage.deallocate()
  }

  var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }

  /// Reads `descriptor` to its end, or until `stop` says the bytes so far are enough.
  /// Returns false on a read error.
  mutating func read(from descriptor: FileDescriptor, until stop: (UnsafeRawBufferPointer) -> Bool = { _ in false })
    -> Bool
  {
    while true {
      if count == storage.count { grow() }
      let free = UnsafeMutableRawBufferPointer(rebasing: storage[count...])
      guard let got = try? descriptor.read(into: free) else { return false }
      if got == 0 { return true }
      count += got
      if stop(bytes) { return true }
    }
  }

  mutating func append(_ byte: UInt8) {
    if count == storage.count { grow() }
    storage[count] = byte
    count += 1
  }

  /// Drops bytes from the end, wiping them.
  mutating func removeLast(_ dropped: Int) {
    let dropped = min(dropped, count)
    Memory.wipe(UnsafeMutableRawBufferPointer(rebasing: storage[(count - dropped)..<count]))
    count -= dropped
  }

  /// Removes one trailing `\n`, and a `\r` before it.
  mutating func trimOneNewline() {
    guard count > 0, storage[count - 1] == UInt8(ascii: "\n") else { return }
    removeLast(count > 1 && storage[count - 2] == UInt8(ascii: "\r") ? 2 : 1)
  }

  private mutating func grow() {
    let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: storage.count * 2, alignment: 1)
    larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[..<count]))
    Memory.wipe(storage)
    storage.deallocate()
    storage = larger
  }
}

extension SecretBuffer {
  static func == (buffer: borrowing SecretBuffer, other: borrowing SecretBuffer) -> Bool {
    buffer.bytes.elementsEqual(other.bytes)
  }
}

/// Zeroes an array's bytes in place (best effort: copies made elsewhere are out of reach).
func wipe(_ bytes: inout [UInt8]) {
  bytes.withUnsafeMutableBytes { Memory.wipe($0) }
  bytes = []
}
