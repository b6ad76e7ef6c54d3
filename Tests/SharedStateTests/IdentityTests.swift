import Foundation
import SharedState
import Testing

extension SharedKey where Self == InMemoryKey<Int>.Default {
  static var namedCounter: Self { Self[.inMemory("named-counter"), default: 7] }
}

// On `SharedReaderKey`, so that `SharedReader(wrappedValue:_:)` finds it too.
extension SharedReaderKey where Self == InMemoryKey<Int>.Default {
  fileprivate static var pairedCounter: Self { Self[.inMemory("paired"), default: 0] }
}

private let pairedPath = "/home/test/paired.json"

extension SharedKey where Self == FileStorageKey<Int>.Default {
  fileprivate static var pairedFile: Self { Self[.fileStorage(URL(filePath: pairedPath)), default: 0] }
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

  // A named key given a default of its own goes through `init(wrappedValue:_:)` or
  // `init(require:)`, not the named-key initialiser: it must still be the bare key.

  @Test func namedKeyGivenADefaultSharesWithTheBareKey() {
    testEnvironment().withValue {
      @Shared(.pairedCounter) var named = 3
      @Shared(.inMemory("paired")) var bare = 0
      #expect(bare == 3)
      $bare.withLock { $0 = 4 }
      #expect(named == 4)
      $named.withLock { $0 = 5 }
      #expect(bare == 5)
    }
  }

  @Test func readerOfANamedKeyGivenADefaultSharesWithTheBareKey() {
    testEnvironment().withValue {
      @SharedReader(.pairedCounter) var reader = 3
      @Shared(.inMemory("paired")) var writer = 0
      #expect(writer == 3)
      $writer.withLock { $0 = 6 }
      #expect(reader == 6)
    }
  }

  @Test func requiringANamedKeyFindsTheBareKeysValue() async throws {
    try await testEnvironment().withValue {
      @Shared(.inMemory("paired")) var bare = 8
      let shared: Shared<Int> = try await Shared(require: .pairedCounter)
      let reader: SharedReader<Int> = try await SharedReader(require: .pairedCounter)
      #expect(shared.wrappedValue == 8)
      shared.withLock { $0 = 9 }
      #expect(bare == 9)
      #expect(reader.wrappedValue == 9)
    }
  }

  @Test func namedInMemoryKeyGivenADefaultOutlivesItsHandles() {
    testEnvironment().withValue {
      do {
        @Shared(.pairedCounter) var named = 3
        $named.withLock { $0 = 4 }
      }
      @Shared(.inMemory("paired")) var bare = 0
      #expect(bare == 4)
    }
  }

  @Test func namedFileKeyGivenADefaultIsOneFileWithTheBareKey() {
    let files = InMemoryFileSystem()
    let clock = TestWriteClock()
    testEnvironment(files: files, clock: clock).withValue {
      @Shared(.pairedFile) var named = 1
      @Shared(.fileStorage(URL(filePath: pairedPath))) var bare = 0
      #expect(bare == 1)
      $named.withLock { $0 = 2 }
      $bare.withLock { $0 += 1 }
      clock.advance(by: .seconds(1))
      #expect(files.contents(atPath: pairedPath) == Data("3".utf8))
      // One batch of one file: the first change at once, the second when the window closed.
      #expect(files.writeCount(atPath: pairedPath) == 2)
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

  @Test func aDefaultMayDeclareSharedStateOfItsOwn() {
    struct Inner: Sendable {
      @Shared(.inMemory("inner")) var count = 1
    }
    struct Outer: Sendable {
      @Shared(.inMemory("outer")) var inner = Inner()
    }
    testEnvironment().withValue {
      let outer = Outer()
      #expect(outer.inner.count == 1)
      outer.inner.$count.withLock { $0 += 1 }
      @Shared(.inMemory("inner")) var inner = 0
      #expect(inner == 2)
    }
  }

  @Test func aDefaultThatDeclaresTheSameKeyGetsItsOwnValueAndTheFirstRegisteredWins() {
    testEnvironment().withValue {
      @Shared(.inMemory("both")) var outer: Int = {
        @Shared(.inMemory("both")) var inner = 5
        return inner + 1
      }()
      // The handle in the default was registered first: it is the value.
      #expect(outer == 5)
    }
  }

  @Test func handlesMadeAndDroppedOnManyThreadsAtOnceNeverCrash() {
    let environment = testEnvironment()
    let key = environment.withValue { FileStorageKey<Int>.fileStorage(URL(filePath: "/home/test/churn.json")) }
    // The last handle of a reference going on one thread while another thread asks the
    // registry for the same key: the reference's release must not happen under the registry's lock.
    let finished = finishesOnAnotherThread(within: .seconds(60)) {
      DispatchQueue.concurrentPerform(iterations: 8) { _ in
        for _ in 0..<5_000 { _ = Shared(wrappedValue: 0, key).wrappedValue }
      }
    }
    #expect(finished)
  }

  @Test func environmentsDoNotShare() throws {
    let one = testEnvironment().withValue { Shared(wrappedValue: 1, .inMemory("same")) }
    let two = testEnvironment().withValue { Shared(wrappedValue: 2, .inMemory("same")) }
    one.withLock { $0 = 10 }
    #expect(two.wrappedValue == 2)
  }
}
