// Code written the way swift-sharing's documentation teaches it, with `import SharedState` in
// place of `import Sharing` and nothing else changed; the tests below run it on Linux, each in
// an isolated environment (in-memory storage, file system and defaults).
import Foundation
import Observation
import SharedState
import Synchronization
import Testing

struct Fact: Codable, Equatable, Identifiable, Sendable {
  var id: Int
  var text: String
}

struct User: Codable, Equatable, Sendable {
  var name: String
  var isAdmin = false
}

enum Appearance: String, Sendable { case system, light, dark }

extension SharedKey where Self == FileStorageKey<[Fact]>.Default {
  static var savedFacts: Self {
    Self[
      .fileStorage(.homeDirectory.appending(component: "facts.json"), decoder: factDecoder, encoder: factEncoder),
      default: []]
  }
}

extension SharedKey where Self == AppStorageKey<Int>.Default {
  static var launchCount: Self { Self[.appStorage("launchCount"), default: 0] }
}

extension SharedReaderKey where Self == AppStorageKey<Appearance>.Default {
  static var appearance: Self { Self[.appStorage("appearance"), default: .system] }
}

extension SharedKey where Self == InMemoryKey<User?> {
  static var currentUser: Self { .inMemory("currentUser") }
}

private let factDecoder = JSONDecoder()
private let factEncoder: JSONEncoder = {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
  return encoder
}()

@Observable
final class FactsModel {
  @ObservationIgnored @Shared(.savedFacts) var facts
  @ObservationIgnored @Shared(.launchCount) var launchCount
  @ObservationIgnored @Shared(.appStorage("lastOpened")) var lastOpened: Date?
  @ObservationIgnored @Shared(.currentUser) var user
  @ObservationIgnored @SharedReader(.appearance) var appearance

  func launched(at date: Date) {
    $launchCount.withLock { $0 += 1 }
    $lastOpened.withLock { $0 = date }
  }

  func save(_ fact: Fact) {
    $facts.withLock { $0.insert(fact, at: 0) }
  }

  var factCount: SharedReader<Int> { $facts.count }

  var longFactCount: SharedReader<Int> { $facts.read { $0.filter { $0.text.count > 10 }.count } }

  func logIn(_ name: String) {
    $user.withLock { $0 = User(name: name) }
  }

  /// The signed-in user's own handle, as a child feature would take it.
  var signedInUser: Shared<User>? { Shared($user) }
}

/// A key of one's own, as swift-sharing's "Custom persistence" article teaches.
struct CountingKey: SharedKey {
  let counter: Counter
  var id: String { "counting" }

  final class Counter: Sendable {
    let saves = Atomic<Int>(0)
  }

  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    continuation.resume(returning: counter.saves.load(ordering: .relaxed))
  }

  func subscribe(context: LoadContext<Int>, subscriber: SharedSubscriber<Int>) -> SharedSubscription {
    SharedSubscription {}
  }

  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    counter.saves.add(1, ordering: .relaxed)
    continuation.resume()
  }
}

@Suite("swift-sharing style code, unchanged")
struct SwiftSharingStyleTests {
  let files = InMemoryFileSystem()
  let defaults = InMemoryDefaults()
  let clock = TestWriteClock()
  var environment: SharedEnvironment { .test(fileSystem: files, defaults: defaults, clock: clock) }
  var factsPath: String { URL.homeDirectory.appending(component: "facts.json").path }

  @Test func appStorageValuesAndOptionalsWithoutADefaultAreStored() {
    environment.withValue {
      let model = FactsModel()
      #expect(model.lastOpened == nil)
      model.launched(at: Date(timeIntervalSince1970: 100))
      model.launched(at: Date(timeIntervalSince1970: 200))
      #expect(defaults.value(forKey: "launchCount") == .integer(2))
      #expect(defaults.value(forKey: "lastOpened") == .date(Date(timeIntervalSince1970: 200)))
      model.$lastOpened.withLock { $0 = nil }
      #expect(defaults.value(forKey: "lastOpened") == nil)
    }
  }

  @Test func aReaderKeySeesAnotherWriterOfTheSameEntry() {
    environment.withValue {
      let model = FactsModel()
      #expect(model.appearance == .system)
      @Shared(.appStorage("appearance")) var appearance = Appearance.system
      $appearance.withLock { $0 = .dark }
      #expect(model.appearance == .dark)
    }
  }

  @Test func fileStorageWritesTheFirstChangeAtOnceWithTheGivenEncoder() throws {
    try environment.withValue {
      let model = FactsModel()
      model.save(Fact(id: 1, text: "Octopuses have three hearts"))
      let written = try #require(files.contents(atPath: factsPath))
      #expect(String(decoding: written, as: UTF8.self).contains("\n  {\n    \"id\" : 1,"))
      #expect(try factDecoder.decode([Fact].self, from: written) == model.facts)
    }
  }

  @Test func readOnlyMembersAndComputedReadersFollowTheValue() {
    environment.withValue {
      let model = FactsModel()
      let count = model.factCount
      let long = model.longFactCount
      model.save(Fact(id: 1, text: "short"))
      model.save(Fact(id: 2, text: "a rather longer fact"))
      #expect(count.wrappedValue == 2)
      #expect(long.wrappedValue == 1)
    }
  }

  @Test func anOptionalUserUnwrapsIntoAHandleThatWritesThrough() throws {
    environment.withValue {
      let model = FactsModel()
      #expect(model.signedInUser == nil)
      model.logIn("ada")
      guard let user = model.signedInUser else {
        Issue.record("no user after logging in")
        return
      }
      user.withLock { $0.isAdmin = true }
      #expect(model.user == User(name: "ada", isAdmin: true))
      #expect(user.name == Shared(value: "ada"))
    }
  }

  @Test func identifiableValuesGiveIdentifiableHandles() {
    environment.withValue {
      let model = FactsModel()
      model.save(Fact(id: 7, text: "x"))
      let handles: [Shared<Fact>] = (0..<model.facts.count).map { model.$facts[$0] }
      #expect(handles.map(\.id) == [7])
    }
  }

  @Test func loadingFromAnotherKeyMovesTheHandleToThatKey() async throws {
    try await environment.withValue {
      defaults.setValue(.integer(41), forKey: "otherCount")
      @Shared(.appStorage("count")) var count = 3
      try await $count.load(.appStorage("otherCount"))
      #expect(count == 41)
      $count.withLock { $0 += 1 }
      #expect(defaults.value(forKey: "otherCount") == .integer(42))
      #expect(defaults.value(forKey: "count") == nil, "the old key was written")
    }
  }

  @Test func aKeyOfOnesOwnIsSavedOnEveryChange() {
    environment.withValue {
      let key = CountingKey(counter: .init())
      @Shared(key) var value = 0
      $value.withLock { $0 = 1 }
      $value.withLock { $0 = 2 }
      let saves = key.counter.saves.load(ordering: .relaxed)
      #expect(saves == 2)
    }
  }

  @Test func continuationsCanBeMadeByKeyAuthorsAndTheirTests() {
    let key = CountingKey(counter: .init())
    let saved = Atomic<Bool>(false)
    key.save(
      1, context: .didSet,
      continuation: SaveContinuation { result in
        if case .success = result { saved.store(true, ordering: .relaxed) }
      })
    let loaded = Atomic<Int>(-1)
    key.load(
      context: .userInitiated,
      continuation: LoadContinuation { result in
        if case .success(let value?) = result { loaded.store(value, ordering: .relaxed) }
      })
    let (wasSaved, loadedValue) = (saved.load(ordering: .relaxed), loaded.load(ordering: .relaxed))
    #expect(wasSaved)
    #expect(loadedValue == 1)
  }
}
