// The tests of "Writing a persistent key" (WritingAPersistentKey.md), run as the article writes them.
import Foundation
import SharedState
import Testing

@Suite struct RowKeyTests {
  let table = InMemoryRowTable()
  let clock = TestWriteClock()

  var environment: SharedEnvironment {
    var environment = SharedEnvironment.test(clock: clock)
    environment.rowTable = table
    return environment
  }

  @Test func theFirstMutationIsWrittenAtOnceAndTheRestWhenTheWindowCloses() {
    environment.withValue {
      @Shared(.row("count")) var count = 0
      for _ in 1...100 { $count.withLock { $0 += 1 } }
      #expect(table.read("count") == Data("1".utf8))
      clock.advance(by: .seconds(1))
      #expect(table.read("count") == Data("100".utf8))
    }
  }

  @Test func aChangeMadeElsewhereReachesTheValue() {
    environment.withValue {
      @Shared(.row("count")) var count = 0
      table.write(Data("41".utf8), to: "count")
      #expect(count == 41)
    }
  }

  @Test func undecodableContentsAreKeptBeforeTheFirstWrite() {
    table.write(Data("oops".utf8), to: "count")
    environment.withValue {
      @Shared(.row("count")) var count = 0
      #expect($count.loadError is UndecodableRow)
      $count.withLock { $0 = 1 }
      #expect(table.names.contains { $0.hasPrefix("count.undecodable-") })
      #expect(table.read("count") == Data("1".utf8))
    }
  }
}
