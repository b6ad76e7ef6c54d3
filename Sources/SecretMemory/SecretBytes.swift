package import SystemCalls

/// The bytes of a secret, in memory that is never swapped or dumped, and wiped when released.
///
/// The one type the package keeps secret bytes in: the client's values, the CLI's input, the
/// daemon's session keys. Its memory comes from locked pages (`mlock`, `MADV_DONTDUMP`); when the
/// process may lock no more, it is ordinary memory that is still wiped. Two values compare in
/// constant time for equal lengths; the type is not `Hashable`, and it never prints its bytes.
///
/// ```swift
/// let token = SecretBytes(copying: Array("s3cr3t".utf8))
/// token.withUnsafeBytes { bytes in write(bytes) }
/// let copy = Array(token)  // a copy you asked for: yours to wipe
/// ```
public final class SecretBytes: @unchecked Sendable {
  // SAFETY: the public API only reads. The bytes change only through the `package` methods,
  // which the code that makes a value calls (reading input into it, decrypting into it) before
  // anything else can see it; the memory is wiped and returned exactly once, in deinit.
  private var block: UnsafeMutableRawBufferPointer
  private var isPooled: Bool
  /// The number of bytes.
  public private(set) var count: Int

  /// `count` zero bytes in locked memory; nil when locked memory is exhausted and the process
  /// does not allow unlocked memory.
  package init?(lockedCount count: Int) {
    guard let block = Self.pooled(count) else { return nil }
    (self.block, isPooled, self.count) = (block, true, count)
  }

  /// A copy of `bytes` in locked memory; nil as for ``init(lockedCount:)``.
  package convenience init?(lockedCopying bytes: UnsafeRawBufferPointer) {
    self.init(lockedCount: bytes.count)
    block.copyMemory(from: bytes)
  }

  /// `count` zero bytes, locked when the process may lock them.
  package init(count: Int = 0) {
    (block, isPooled) = Self.allocate(count)
    self.count = count
  }

  /// A copy of `bytes`.
  public convenience init(copying bytes: some Collection<UInt8>) {
    self.init(count: bytes.count)
    block.copyBytes(from: bytes)
  }

  /// The UTF-8 bytes of `text`.
  public convenience init(_ text: String) {
    self.init(copying: text.utf8)
  }

  deinit { Self.release(block, pooled: isPooled) }

  public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeRawBufferPointer(rebasing: block[..<count]))
  }

  package func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E)
    -> R
  {
    try body(UnsafeMutableRawBufferPointer(rebasing: block[..<count]))
  }

  package func append(_ byte: UInt8) {
    reserve(count + 1)
    block[count] = byte
    count += 1
  }

  package func append(contentsOf bytes: some Collection<UInt8>) {
    reserve(count + bytes.count)
    UnsafeMutableRawBufferPointer(rebasing: block[count...]).copyBytes(from: bytes)
    count += bytes.count
  }

  /// Drops bytes from the end, wiping them.
  package func removeLast(_ dropped: Int) {
    let dropped = Swift.min(Swift.max(dropped, 0), count)
    Memory.wipe(UnsafeMutableRawBufferPointer(rebasing: block[(count - dropped)..<count]))
    count -= dropped
  }

  /// Reads `descriptor` to its end, or until `stop` says the bytes so far are enough.
  /// Returns false on a read error.
  package func read(from descriptor: FileDescriptor, until stop: (UnsafeRawBufferPointer) -> Bool = { _ in false })
    -> Bool
  {
    while true {
      reserve(count + 1)
      guard let got = try? descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: block[count...])) else {
        return false
      }
      if got == 0 { return true }
      count += got
      if withUnsafeBytes(stop) { return true }
    }
  }

  /// Moves the bytes to a larger block when `needed` does not fit, wiping the old one, so no
  /// stale copy is left in freed memory as `Array` growth would leave.
  private func reserve(_ needed: Int) {
    guard needed > block.count else { return }
    let (larger, pooled) = Self.allocate(Swift.max(needed, block.count * 2, 64))
    larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: block[..<count]))
    Self.release(block, pooled: isPooled)
    (block, isPooled) = (larger, pooled)
  }

  private static func pooled(_ count: Int) -> UnsafeMutableRawBufferPointer? {
    SecureMemory.allocate(count).map { UnsafeMutableRawBufferPointer(start: $0.pointer, count: $0.capacity) }
  }

  /// A block from the locked pool, else from the heap (still wiped when released).
  private static func allocate(_ count: Int) -> (UnsafeMutableRawBufferPointer, pooled: Bool) {
    if let pooled = pooled(count) { return (pooled, true) }
    let plain = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
    plain.initializeMemory(as: UInt8.self, repeating: 0)
    return (plain, false)
  }

  private static func release(_ block: UnsafeMutableRawBufferPointer, pooled: Bool) {
    guard let base = block.baseAddress else { return }
    if pooled {
      SecureMemory.free(base, capacity: block.count)
    } else {
      Memory.wipe(block)
      block.deallocate()
    }
  }
}

extension SecretBytes: RandomAccessCollection {
  public var startIndex: Int { 0 }
  public var endIndex: Int { count }
  public subscript(position: Int) -> UInt8 {
    precondition(position >= 0 && position < count, "index out of range")
    return block[position]
  }

  /// The bytes in place: `Array(_:)`, `String(validating:as:)` and `append(contentsOf:)` copy
  /// them in one pass instead of byte by byte through a temporary buffer nobody wipes.
  public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
    try UnsafeRawBufferPointer(rebasing: block[..<count]).withMemoryRebound(to: UInt8.self, body)
  }
}

extension SecretBytes: Equatable {
  /// Equal bytes, compared in constant time when the lengths are equal.
  public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in 0..<lhs.count { difference |= lhs.block[index] ^ rhs.block[index] }
    return difference == 0
  }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// Never the bytes themselves, so a value that reaches a log or an error reveals nothing.
  public var description: String { "SecretBytes(\(count) bytes)" }
  public var debugDescription: String { description }
  public var customMirror: Mirror { Mirror(self, children: ["count": count]) }
}
