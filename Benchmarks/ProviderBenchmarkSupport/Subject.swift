public import BenchmarkSupport
public import SecretTestSupport

/// Rates and CPU per call of one kind of call, per fill level.
public struct CallFigures {
  public private(set) var rates: [Int: Samples] = [:]
  /// The daemon's CPU seconds per call.
  public private(set) var daemonCPU: [Int: Samples] = [:]

  mutating func append(_ size: Int, calls: Int, wall: Double, daemonCPU seconds: Double) {
    rates[size, default: Samples()].append(Double(calls) / wall)
    daemonCPU[size, default: Samples()].append(seconds / Double(calls))
  }

  public func rate(_ size: Int) -> Samples { rates[size] ?? Samples() }

  /// Microseconds of daemon CPU per call, the median.
  public func daemonMicroseconds(_ size: Int) -> Int { Int((daemonCPU[size]?.median ?? 0) * 1e6) }
}

/// One provider and collection under test, through libsecret: its client and its figures per
/// fill level.
public final class Subject {
  public let name: String
  public let collection: String
  public let instance: ProviderInstance
  public let service: LibSecretService
  /// Whether it keeps its items in memory only.
  public let inMemory: Bool
  public private(set) var stored = 0
  /// Stores that replace an item, stores that create one, deletes, lookups.
  public private(set) var replaces = CallFigures()
  public private(set) var creates = CallFigures()
  public private(set) var deletes = CallFigures()
  public private(set) var lookups = CallFigures()
  /// This process's CPU seconds per lookup (the libsecret client).
  public private(set) var lookupClientCPU: [Int: Samples] = [:]
  public var memory: ResidentMemory?

  /// - Parameter collection: where it stores (an alias or a collection's name).
  public init(_ name: String, _ instance: ProviderInstance, collection: String, inMemory: Bool = true) throws {
    self.name = name
    self.collection = collection
    self.instance = instance
    self.inMemory = inMemory
    service = try LibSecretService(address: instance.busAddress, busName: instance.busName)
  }

  /// Adds items until there are `size`.
  public func fill(to size: Int) throws {
    while stored < size {
      try service.store(stored, in: collection)
      stored += 1
    }
  }

  /// Replaces `count` of the items there are, spread over all of them.
  public func measureReplaces(_ size: Int, count: Int, round: Int) throws {
    try measure(&replaces, size, calls: count) {
      for step in 0..<count { try service.store(spread(round, step, count, size), in: collection) }
    }
  }

  /// Creates `count` items beyond the `size` there are, then deletes them again (libsecret's
  /// clear: a search, then the deletion), so every round starts at `size`.
  public func measureCreatesAndDeletes(_ size: Int, count: Int) throws {
    let added = size..<size + count
    try measure(&creates, size, calls: count) { for index in added { try service.store(index, in: collection) } }
    try measure(&deletes, size, calls: count) { for index in added { try service.clear(index) } }
  }

  public func measureLookups(_ size: Int, count: Int, round: Int) throws {
    let client = ownCPUSeconds()
    try measure(&lookups, size, calls: count) {
      for step in 0..<count { try service.lookup(spread(round, step, count, size)) }
    }
    lookupClientCPU[size, default: Samples()].append((ownCPUSeconds() - client) / Double(count))
  }

  private func measure(_ figures: inout CallFigures, _ size: Int, calls: Int, _ body: () throws -> Void) throws {
    let daemon = cpuSeconds(instance.pid)
    let wall = try seconds(body)
    figures.append(size, calls: calls, wall: wall, daemonCPU: cpuSeconds(instance.pid) - daemon)
  }

  /// Item indexes that visit the whole collection, in an order that differs from round to round.
  private func spread(_ round: Int, _ step: Int, _ count: Int, _ size: Int) -> Int {
    ((round * count + step) * 7919) % size
  }
}

/// The rate tables at `size`: stores and lookups of every subject, creates and deletes of those
/// `hasCreates` keeps, each with the first subject's advantage round by round (as
/// `referenceName`; none on its own row).
public func printRateTables(
  _ subjects: [Subject], at size: Int, referenceName: String, hasCreates: (Subject) -> Bool = { _ in true }
) {
  guard let reference = subjects.first else { return }
  func cells(_ subject: Subject, _ figures: (Subject) -> CallFigures) -> String {
    let rate = figures(subject).rate(size)
    let ratio = subject === reference ? "" : Samples.ratios(figures(reference).rate(size), rate).formatted(2)
    return "\(rate) | \(ratio)"
  }
  print("")
  print("At \(size) items:")
  print("| | stores/s | \(referenceName) is × faster | lookups/s | \(referenceName) is × faster |")
  print("|---|---|---|---|---|")
  for subject in subjects {
    print("| \(subject.name) | \(cells(subject, \.replaces)) | \(cells(subject, \.lookups)) |")
  }
  print("| | creates/s | \(referenceName) is × faster | deletes/s | \(referenceName) is × faster |")
  print("|---|---|---|---|---|")
  for subject in subjects where hasCreates(subject) {
    print("| \(subject.name) | \(cells(subject, \.creates)) | \(cells(subject, \.deletes)) |")
  }
}
