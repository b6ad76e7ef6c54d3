import SharedState
import Testing

@Suite(".inMemory")
struct InMemoryKeyTests {
  struct Session: Sendable, Equatable {
    // Deliberately not Codable.
    var token: [UInt8]
  }

  @Test func noCodableNeededAndSameNameSameValue() throws {
    testEnvironment().withValue {
      @Shared(.inMemory("session")) var session: Session? = nil
      $session.withLock { $0 = Session(token: [1, 2, 3]) }
      @SharedReader(.inMemory("session")) var other: Session? = nil
      #expect(other == Session(token: [1, 2, 3]))
    }
  }

  @Test func valueLivesAsLongAsTheProcessNotTheHandles() throws {
    let environment = testEnvironment()
    environment.withValue {
      do {
        let counter = Shared(wrappedValue: 0, .inMemory("lives"))
        counter.withLock { $0 = 12 }
      }
      let again = Shared(wrappedValue: 0, .inMemory("lives"))
      #expect(again.wrappedValue == 12)
    }
    #expect(environment.inMemoryStorage.names == ["lives"])
  }

  @Test func everyTestEnvironmentStartsEmpty() throws {
    testEnvironment().withValue {
      let counter = Shared(wrappedValue: 0, .inMemory("fresh"))
      counter.withLock { $0 += 1 }
    }
    testEnvironment().withValue {
      let counter = Shared(wrappedValue: 0, .inMemory("fresh"))
      #expect(counter.wrappedValue == 0)
    }
  }
}
