// The tests of "Coming from swift-sharing" (ComingFromSwiftSharing.md), run as they are written.
import Foundation
import SharedState
import Testing

@Test func launchesAreCounted() {
  let defaults = InMemoryDefaults()
  SharedEnvironment.test(defaults: defaults).withValue {
    @Shared(.appStorage("launchCount")) var launchCount = 0
    $launchCount.withLock { $0 += 1 }
    #expect(defaults.value(forKey: "launchCount") == .integer(1))
  }
}

@Test func notesAreWrittenAtOnceThenOncePerWindow() {
  let files = InMemoryFileSystem()
  let clock = TestWriteClock()
  SharedEnvironment.test(fileSystem: files, clock: clock).withValue {
    @Shared(.fileStorage(URL(filePath: "/notes.json"))) var notes: [String] = []
    $notes.withLock { $0.append("milk") }  // written at once: it opens a window
    $notes.withLock { $0.append("eggs") }  // waits for the window to close
    #expect(files.contents(atPath: "/notes.json") == Data(#"["milk"]"#.utf8))
    clock.advance(by: .seconds(1))
    #expect(files.contents(atPath: "/notes.json") == Data(#"["milk","eggs"]"#.utf8))
  }
}
