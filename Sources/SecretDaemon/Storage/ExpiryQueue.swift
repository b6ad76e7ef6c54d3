// A binary min-heap of expiry times.

struct ExpiryQueue {
  struct Entry {
    let time: UInt64
    let reference: ItemReference
  }

  private var heap: [Entry] = []

  var peek: Entry? { heap.first }
  var count: Int { heap.count }

  mutating func push(time: UInt64, reference: ItemReference) {
    heap.append(Entry(time: time, reference: reference))
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].time < heap[parent].time else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  @discardableResult
  mutating func pop() -> Entry? {
    guard !heap.isEmpty else { return nil }
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].time < heap[smallest].time { smallest = left }
      if right < heap.count, heap[right].time < heap[smallest].time { smallest = right }
      guard smallest != parent else { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return top
  }
}
