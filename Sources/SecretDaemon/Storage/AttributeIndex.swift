// An inverted index from (name, value) to items, so lookups do not scan every item.

struct AttributePair: Hashable {
  let name: String
  let value: String
}

/// Maps each attribute pair to the items that carry it.
struct AttributeIndex {
  private var postings: [AttributePair: Set<Int>] = [:]

  mutating func insert(_ item: Int, attributes: [String: String]) {
    for (name, value) in attributes {
      postings[AttributePair(name: name, value: value), default: []].insert(item)
    }
  }

  mutating func remove(_ item: Int, attributes: [String: String]) {
    for (name, value) in attributes {
      let pair = AttributePair(name: name, value: value)
      postings[pair]?.remove(item)
      if postings[pair]?.isEmpty == true { postings[pair] = nil }
    }
  }

  /// At most how many items carry every pair of `query`, without intersecting anything; nil
  /// for an empty query (every item).
  func matchBound(_ query: [String: String]) -> Int? {
    guard !query.isEmpty else { return nil }
    return query.map { postings[AttributePair(name: $0.key, value: $0.value)]?.count ?? 0 }.min()
  }

  /// Items carrying every pair of `query`; nil means "no constraint" (empty query).
  func matches(_ query: [String: String]) -> Set<Int>? {
    guard !query.isEmpty else { return nil }
    var sets: [Set<Int>] = []
    for (name, value) in query {
      guard let set = postings[AttributePair(name: name, value: value)] else { return [] }
      sets.append(set)
    }
    sets.sort { $0.count < $1.count }
    var result = sets[0]
    for set in sets.dropFirst() {
      result.formIntersection(set)
      if result.isEmpty { break }
    }
    return result
  }
}
