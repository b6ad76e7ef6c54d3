import SharedState
import Testing

@Suite("SharedReader: read-only, one way")
struct ReaderTests {
  @Test func readerFollowsItsShared() {
    let shared = Shared(value: 1)
    let reader = SharedReader(shared)
    shared.withLock { $0 = 2 }
    #expect(reader.wrappedValue == 2)
  }

  @Test func readerOfAKeySharesWithWriters() throws {
    testEnvironment().withValue {
      @SharedReader(.inMemory("r")) var reader = 1
      @Shared(.inMemory("r")) var writer = 5
      #expect(writer == 1)
      $writer.withLock { $0 = 3 }
      #expect(reader == 3)
    }
  }

  @Test func writerCreatedAfterAReaderStillSaves() {
    let backend = Backend<Int>()
    let reader = SharedReader(wrappedValue: 0, ControlledKey(backend: backend))
    let writer = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    writer.withLock { $0 = 8 }
    #expect(reader.wrappedValue == 8)
    #expect(backend.state.withLock { $0.stored } == 8)
  }

  @Test func readerMemberProjection() {
    struct Point: Sendable {
      var x: Int
      var y: Int
    }
    let shared = Shared(value: Point(x: 1, y: 2))
    let y = SharedReader(shared).y
    shared.withLock { $0.y = 9 }
    #expect(y.wrappedValue == 9)
  }

  @Test func readerReloads() async throws {
    let backend = Backend<Int>(stored: 1)
    let reader = SharedReader(wrappedValue: 0, ControlledKey(backend: backend))
    backend.state.withLock { $0.stored = 2 }
    try await reader.load()
    #expect(reader.wrappedValue == 2)
  }
}
