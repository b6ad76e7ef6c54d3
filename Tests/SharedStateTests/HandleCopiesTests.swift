import Foundation
import Observation
import SecretTestSupport
import SharedState
import Testing

/// Copies of one handle move together; handles derived from it do not.
@Suite("Handle copies")
struct HandleCopiesTests {
  @Test func assigningTheProjectedValueMovesEveryCopyMadeBefore() {
    testEnvironment().withValue {
      @Shared(.inMemory("left")) var value = 1
      let copy = $value
      let reader = SharedReader($value)
      $value = Shared(wrappedValue: 2, .inMemory("right"))
      #expect(copy.wrappedValue == 2)
      copy.withLock { $0 = 3 }
      #expect(value == 3)
      // A reader is a handle of its own: it stays with the reference it was made from.
      #expect(reader.wrappedValue == 1)
      @Shared(.inMemory("right")) var right = 0
      #expect(right == 3)
    }
  }

  @Test func aMemberHandleMadeBeforeTheMoveStaysWithTheOldReference() {
    struct Pair: Sendable {
      var first = 0
    }
    @Shared(value: Pair()) var pair
    let first = $pair.first
    $pair = Shared(value: Pair(first: 9))
    #expect(first.wrappedValue == 0)
    #expect(pair.first == 9)
    #expect($pair.first.wrappedValue == 9)
  }

  @Test func observersOfTheValueAreToldWhenTheHandleMoves() {
    @Shared(value: 1) var value
    let changes = CountBox()
    withObservationTracking {
      _ = value
    } onChange: {
      changes.increment()
    }
    $value = Shared(value: 2)
    #expect(changes.value == 1)
  }

  @Test func readerCopiesMoveTogetherToo() {
    testEnvironment().withValue {
      @SharedReader(.inMemory("a")) var value = 1
      let copy = $value
      $value = SharedReader(value: 5)
      #expect(copy.wrappedValue == 5)
    }
  }

  @Test func loadingFromAnotherKeyMovesEveryCopyAndShowsLoadingMeanwhile() async throws {
    let backend = Backend<Int>(stored: 42)
    let loading = HeldLoads()
    let key = ControlledKey(backend: backend, heldLoads: loading)
    try await testEnvironment().withValue {
      @Shared(.inMemory("before")) var value = 1
      let copy = $value
      let derived = $value.read { $0 * 10 }
      let load = Task { [$value] in try await $value.load(key) }
      try await eventually("the explicit load reaches the key") { loading.count == 1 }
      #expect(copy.isLoading, "a copy does not see the load of the key it moved to")
      #expect(copy.wrappedValue == 1, "the new key starts from the current value")
      loading.releaseAll()
      try await load.value
      #expect(!copy.isLoading)
      #expect(copy.wrappedValue == 42)
      copy.withLock { $0 = 43 }
      #expect(backend.state.withLock { $0.stored } == 43)
      // A handle derived before the move follows the old reference.
      #expect(derived.wrappedValue == 10)
      @Shared(.inMemory("before")) var old = 0
      #expect(old == 1)
    }
  }

  @Test func aNamedKeyGivenAValueUsesItInPlaceOfItsDefault() {
    testEnvironment().withValue {
      @Shared(.namedCounter) var named = 3
      #expect(named == 3)
      @SharedReader(.namedCounter) var reader = 4
      #expect(reader == 3)
    }
  }
}

/// How handles describe themselves: as swift-sharing writes them.
@Suite("Descriptions")
struct DescriptionTests {
  @Test func aValueHandleNamesItsTypeAndValue() {
    @Shared(value: 0) var count
    #expect($count.description == "Shared<Int>(value: 0)")
    #expect(SharedReader($count).description == "SharedReader<Int>(value: 0)")
    @Shared(value: ["a": 1]) var counts: [String: Int?]
    #expect($counts.description == #"Shared<[String: Int?]>(value: ["a": Optional(1)])"#)
  }

  @Test func aKeyedHandleNamesItsKey() {
    testEnvironment().withValue {
      @Shared(.inMemory("count")) var count = 0
      #expect($count.description == #"Shared<Int>(.inMemory("count"))"#)
      @Shared(.appStorage("launches")) var launches = 0
      #expect($launches.description == #"Shared<Int>(.appStorage("launches"))"#)
      #expect(SharedReader($launches).description == #"SharedReader<Int>(.appStorage("launches"))"#)
      @Shared(.fileStorage(URL(filePath: "/tmp/count.json"))) var file = 0
      #expect($file.description == "Shared<Int>(.fileStorage(file:///tmp/count.json))")
      @Shared(.namedCounter) var named
      #expect($named.description == #"Shared<Int>(.inMemory("named-counter"))"#)
    }
  }

  @Test func derivedHandlesDescribeTheWayFromTheirRoot() throws {
    struct User: Sendable {
      var name = "Blob"
    }
    @Shared(value: User()) var user
    #expect($user.name.description.hasSuffix(#"(name: "Blob")[dynamicMember: \User.name])"#))
    #expect($user.name.description.hasPrefix("Shared<String>(value: "))
    #expect($user.read { $0.name.count }.description.hasSuffix(", as: Int.self))"))
    @Shared(value: 1) var optional: Int?
    let unwrapped = try #require(Shared($optional))
    #expect(unwrapped.description == "Shared<Int>(value: Optional(1)!)")
  }
}
