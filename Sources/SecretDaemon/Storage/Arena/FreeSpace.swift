// The arena's free blocks, indexed in this process only (rebuilt when an arena is opened): by
// start and by end, to join a freed block with its free neighbours at once, and by size class,
// to hand out the best-fitting block.

/// Free blocks of an arena, by offset and size.
struct FreeSpace {
  private var sizeAt: [Int: Int] = [:]
  private var startEndingAt: [Int: Int] = [:]
  /// Offsets of free blocks, by the power of two below their size.
  private var classes: [Set<Int>] = Array(repeating: [], count: 64)

  /// Bytes free in all.
  private(set) var total = 0

  private static func sizeClass(_ size: Int) -> Int { Int.bitWidth - 1 - size.leadingZeroBitCount }

  mutating func insert(_ offset: Int, size: Int) {
    sizeAt[offset] = size
    startEndingAt[offset + size] = offset
    classes[Self.sizeClass(size)].insert(offset)
    total += size
  }

  private mutating func remove(_ offset: Int) -> Int? {
    guard let size = sizeAt.removeValue(forKey: offset) else { return nil }
    startEndingAt[offset + size] = nil
    classes[Self.sizeClass(size)].remove(offset)
    total -= size
    return size
  }

  /// Adds a free block, joined with the free blocks just before and after it; returns the
  /// joined block.
  mutating func insertJoining(_ offset: Int, size: Int) -> (offset: Int, size: Int) {
    var start = offset
    var joined = size
    if let before = startEndingAt[offset], let beforeSize = remove(before) {
      start = before
      joined += beforeSize
    }
    if let afterSize = remove(offset + size) { joined += afterSize }
    insert(start, size: joined)
    return (start, joined)
  }

  /// Removes and returns a free block of at least `size` bytes: the smallest of the request's
  /// own size class, else any of the next class that has one (every block there fits).
  mutating func takeBestFit(_ size: Int) -> (offset: Int, size: Int)? {
    let own = Self.sizeClass(size)
    let fitting = classes[own].compactMap { offset in sizeAt[offset].flatMap { $0 >= size ? (offset, $0) : nil } }
    if let best = fitting.min(by: { $0.1 < $1.1 }) {
      _ = remove(best.0)
      return best
    }
    for sizeClass in own + 1..<classes.count {
      guard let offset = classes[sizeClass].first, let found = remove(offset) else { continue }
      return (offset, found)
    }
    return nil
  }

  /// The largest free block's size.
  var largest: Int { sizeAt.values.max() ?? 0 }
}
