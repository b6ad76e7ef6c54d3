import SharedState
import Testing

extension SharedKey where Self == InMemoryKey<Int>.Default {
  static var namedCounter: Self { Self[.inMemory("named-counter"), default: 7] }
}

@Suite("Identity: one reference per key type and id")
struct IdentityTests {
  @Test func equalKeysShareAndTheFirstDefaultWins() throws {
    testEnvironment().withValue {
      let first = Shared(wrappedValue: 1, .inMemory("a"))
      let second = Shared(wrappedValue: 2, .inMemory("a"))
      #expect(second.wrappedValue == 1)
      second.withLock { $0 = 5 }
      #expect(first.wrappedValue == 5)
    }
  }

  @Test func differentNamesOrTypesDoNotShare() throws {
    testEnvironment().withValue {
      let a = Shared(wrappedValue: 1, .inMemory("a"))
      let b = Shared(wrappedValue: 2, .inMemory("b"))
      let text = Shared(wrappedValue: "x", .inMemory("a"))
      #expect(a.wrappedValue == 1)
      #expect(b.wrappedValue == 2)
      #expect(text.wrappedValue == "x")
    }
  }

  @Test func namedKeysCarryOneDefaultAndShareWithTheBareKey() throws {
    testEnvironment().withValue {
      @Shared(.namedCounter) var counter
      #expect(counter == 7)
      @Shared(.inMemory("named-counter")) var bare = 99
      #expect(bare == 7)
      $bare.withLock { $0 += 1 }
      #expect(counter == 8)
      @SharedReader(.namedCounter) var reader
      #expect(reader == 8)
    }
  }

  @Test func keysHeldWeaklyAndSubscriptionCancelledWithTheLastHolder() {
    let backend = Backend<Int>(stored: 3)
    var first: Shared<Int>? = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    var second: Shared<Int>? = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    #expect(second?.wrappedValue == 3)
    #expect(backend.state.withLock { ($0.subscribes, $0.loads) } == (1, 1))
    first = nil
    #expect(backend.state.withLock { $0.cancels } == 0)
    _ = first
    second = nil
    _ = second
    #expect(backend.state.withLock { $0.cancels } == 1)
    // A new handle creates a new reference: loads and subscribes again.
    let third = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    #expect(third.wrappedValue == 3)
    #expect(backend.state.withLock { ($0.subscribes, $0.loads) } == (2, 2))
  }

  @Test func environmentsDoNotShare() throws {
    let one = testEnvironment().withValue { Shared(wrappedValue: 1, .inMemory("same")) }
    let two = testEnvironment().withValue { Shared(wrappedValue: 2, .inMemory("same")) }
    one.withLock { $0 = 10 }
    #expect(two.wrappedValue == 2)
  }
}
