public import Foundation

/// Counts the heap allocations of a process, in the manner of swift-nio's allocation counters:
/// the process runs with `AllocationCounter/allocation-counter.c` preloaded (its `malloc` and
/// family count, then call glibc's), whose counters live in a file both sides read. A test
/// starts the process with ``environment`` and reads ``counts`` around the work it measures; a
/// process that measures itself uses ``ownCounts()``. Counts are deterministic where the work
/// is; where other threads' timing moves them a little, tests take the median of several rounds
/// after a warm-up and hold it to today's count within a stated margin.
///
/// ```swift
/// let counter = try AllocationCounter()
/// try withProvider(.secretd, providerEnvironment: counter.environment) { instance in
///   let before = counter.counts
///   _ = try instance.client().read(service: "s", account: "a")
///   print((counter.counts - before).allocations)
/// }
/// ```
public final class AllocationCounter: Sendable {
  /// What a process allocated and freed.
  public struct Counts: Sendable, Equatable, CustomStringConvertible {
    public var allocations: Int
    public var frees: Int
    public var bytes: Int

    public static func - (later: Counts, earlier: Counts) -> Counts {
      Counts(
        allocations: later.allocations - earlier.allocations, frees: later.frees - earlier.frees,
        bytes: later.bytes - earlier.bytes)
    }

    public var description: String { "\(allocations) allocations, \(frees) frees, \(bytes) bytes" }
  }

  /// The file the counters live in (one page, mapped shared by the counting process).
  public let file: URL
  private let library: URL

  public init() throws {
    library = try Self.preloadLibrary()
    file = FileManager.default.temporaryDirectory.appending(path: "allocation-counts-\(UUID().uuidString)")
    try Data(count: 4096).write(to: file)
  }

  deinit { try? FileManager.default.removeItem(at: file) }

  /// What to add to the environment of the process to count.
  public var environment: [String: String] {
    ["LD_PRELOAD": library.path, "ALLOCATION_COUNTER_FILE": file.path]
  }

  /// The counts so far.
  public var counts: Counts {
    let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
    defer { close(descriptor) }
    return Self.counts(in: descriptor)
  }

  /// The counts of this process, when it runs with the counter preloaded; nil otherwise. Reads
  /// with no heap allocation of its own, so it can be called around the work being counted.
  public static func ownCounts() -> Counts? {
    guard let path = getenv("ALLOCATION_COUNTER_FILE") else { return nil }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    return counts(in: descriptor)
  }

  /// The allocations `body` makes in each of `rounds` rounds, after one round of warm-up (first
  /// uses fill caches and start threads); nil when this process does not count.
  public static func allocationRounds(rounds: Int = 10, _ body: () throws -> Void) rethrows -> [Counts]? {
    try body()
    var counted: [Counts] = []
    counted.reserveCapacity(rounds)
    for _ in 0..<rounds {
      guard let before = ownCounts() else { return nil }
      try body()
      guard let after = ownCounts() else { return nil }
      counted.append(after - before)
    }
    return counted
  }

  /// ``allocationRounds(rounds:_:)`` for work that awaits; `settle` runs after each round,
  /// uncounted, so that what the round set off elsewhere (signals it caused) ends outside the
  /// next one.
  public static func allocationRounds(
    rounds: Int = 10, settle: () async throws -> Void = {}, _ body: () async throws -> Void
  ) async rethrows -> [Counts]? {
    try await body()
    try await settle()
    var counted: [Counts] = []
    counted.reserveCapacity(rounds)
    for _ in 0..<rounds {
      guard let before = ownCounts() else { return nil }
      try await body()
      guard let after = ownCounts() else { return nil }
      counted.append(after - before)
      try await settle()
    }
    return counted
  }

  private static func counts(in descriptor: Int32) -> Counts {
    withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 3) { words in
      words.initialize(repeating: 0)
      _ = pread(descriptor, words.baseAddress, 3 * MemoryLayout<UInt64>.size, 0)
      return Counts(allocations: Int(words[0]), frees: Int(words[1]), bytes: Int(words[2]))
    }
  }

  /// The preload library, compiled from its source (see ``compiledPreloadLibrary(_:)``).
  private static func preloadLibrary() throws -> URL {
    try compiledPreloadLibrary(
      URL(filePath: #filePath).deletingLastPathComponent().appending(path: "AllocationCounter/allocation-counter.c"))
  }
}

/// A library to preload (LD_PRELOAD), compiled from the C file `source` with the toolchain's
/// clang into .build once per version of the source.
public func compiledPreloadLibrary(_ source: URL) throws -> URL {
  let text = try Data(contentsOf: source)
  let hash = text.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
  let name = source.deletingPathExtension().lastPathComponent
  let folder = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appending(path: ".build/\(name)")
  let library = folder.appending(path: "\(name)-\(String(hash, radix: 16)).so")
  if FileManager.default.fileExists(atPath: library.path) { return library }
  try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  let swift = try resolveExecutable("swift").resolvingSymlinksInPath()
  let clang = swift.deletingLastPathComponent().appending(path: "clang")
  let building = folder.appending(path: "building-\(UUID().uuidString).so")
  let compile = try runProcess(
    clang.path, ["-shared", "-fPIC", "-O2", "-o", building.path, source.path], environment: environmentWithoutBus,
    in: folder)
  guard compile.status == 0 else { throw HarnessError("cannot compile \(source.path): \(compile.stderrText)") }
  // Renamed into place: tests that compile it at once each get a whole file.
  guard rename(building.path, library.path) == 0 else { throw HarnessError("cannot rename \(building.path)") }
  return library
}
