import Foundation
import Observation
import SharedState
import Testing

struct Note: Codable, Equatable, Sendable {
  var title: String
}

@Suite(".fileStorage on the in-memory file system")
struct FileStorageKeyTests {
  let files = InMemoryFileSystem()
  let clock = TestWriteClock()
  let log = IssueLog()
  var environment: SharedEnvironment { testEnvironment(files: files, clock: clock, log: log) }
  let path = "/home/test/notes.json"
  var url: URL { URL(filePath: path) }

  @Test func readsJSONAndWritesNothingBeforeTheFirstMutation() throws {
    files.setContents(Data(#"[{"title":"a"}]"#.utf8), atPath: path)
    environment.withValue {
      @Shared(.fileStorage(url)) var notes: [Note] = []
      #expect(notes == [Note(title: "a")])
      clock.advance(by: .seconds(10))
      #expect(files.writeCount(atPath: path) == 0)
    }
  }

  @Test func absentFileGivesTheDefaultAndStaysAbsent() throws {
    environment.withValue {
      @Shared(.fileStorage(url)) var notes: [Note] = [Note(title: "default")]
      #expect(notes == [Note(title: "default")])
      #expect($notes.loadError == nil)
      clock.advance(by: .seconds(10))
      #expect(files.contents(atPath: path) == nil)
    }
  }

  @Test func anEmptyFileCountsAsAbsentAndIsLeftAsItIs() throws {
    files.setContents(Data(), atPath: path)
    environment.withValue {
      @Shared(.fileStorage(url)) var notes: [Note] = [Note(title: "default")]
      #expect(notes == [Note(title: "default")])
      #expect($notes.loadError == nil, "an empty file was taken for contents that do not decode")
      clock.advance(by: .seconds(10))
      #expect(files.contents(atPath: path) == Data())
      #expect(files.paths.allSatisfy { !$0.contains(".corrupt-") }, "an empty file was kept as undecodable")
    }
  }

  @Test func theFirstMutationIsWrittenAtOnceAndAThousandMoreInItsWindowMakeOneMoreWrite() throws {
    environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      for _ in 0..<1_000 { $count.withLock { $0 += 1 } }
      #expect(files.writeCount(atPath: path) == 1)
      #expect(files.contents(atPath: path) == Data("1".utf8))
      clock.advance(by: .milliseconds(999))
      #expect(files.writeCount(atPath: path) == 1)
      clock.advance(by: .milliseconds(1))
      #expect(files.writeCount(atPath: path) == 2)
      #expect(files.contents(atPath: path) == Data("1000".utf8))
      clock.advance(by: .seconds(5))
      #expect(files.writeCount(atPath: path) == 2)
    }
  }

  @Test func aChangeAfterTheWriteOfAWindowWaitsForTheNextOneAndAQuietWindowEndsTheBatch() throws {
    environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      $count.withLock { $0 = 1 }
      $count.withLock { $0 = 2 }
      clock.advance(by: .seconds(1))
      #expect(files.writeCount(atPath: path) == 2)
      // Written at 1 s: the window after it is open, so this change waits for its end.
      $count.withLock { $0 = 3 }
      clock.advance(by: .milliseconds(500))
      #expect(files.contents(atPath: path) == Data("2".utf8))
      clock.advance(by: .milliseconds(500))
      #expect(files.contents(atPath: path) == Data("3".utf8))
      // A window that gathers nothing ends the batch: the next change is written at once.
      clock.advance(by: .seconds(1))
      $count.withLock { $0 = 4 }
      #expect(files.contents(atPath: path) == Data("4".utf8))
      #expect(files.writeCount(atPath: path) == 4)
    }
  }

  @Test func windowIsConfigurable() throws {
    environment.withValue {
      @Shared(.fileStorage(url, writeWindow: .seconds(5))) var count = 0
      $count.withLock { $0 = 1 }
      $count.withLock { $0 = 2 }
      clock.advance(by: .seconds(4))
      #expect(files.writeCount(atPath: path) == 1)
      clock.advance(by: .seconds(1))
      #expect(files.writeCount(atPath: path) == 2)
    }
  }

  @Test func userInitiatedSaveIsWrittenBeforeItReturns() async throws {
    try await environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      $count.withLock { $0 = 6 }
      $count.withLock { $0 = 7 }
      #expect(files.contents(atPath: path) == Data("6".utf8))
      try await $count.save()
      #expect(files.contents(atPath: path) == Data("7".utf8))
      #expect(files.writeCount(atPath: path) == 2)
      // The save cancelled the pending write and its window.
      clock.advance(by: .seconds(2))
      #expect(files.writeCount(atPath: path) == 2)
    }
  }

  @Test func corruptFileIsReportedKeptThenBackedUpBeforeTheFirstWrite() throws {
    let garbage = Data("{ not json".utf8)
    files.setContents(garbage, atPath: path)
    try environment.withValue {
      @Shared(.fileStorage(url)) var notes: [Note] = []
      #expect(notes == [])
      let error = try #require($notes.loadError as? FileStorageError)
      #expect("\(error)".contains(path))
      #expect("\(error)".contains("corrupt"))
      clock.advance(by: .seconds(5))
      #expect(files.contents(atPath: path) == garbage)

      $notes.withLock { $0.append(Note(title: "new")) }
      clock.advance(by: .seconds(1))
      let written = try #require(files.contents(atPath: path))
      #expect(try JSONDecoder().decode([Note].self, from: written) == [Note(title: "new")])
      let backups = files.paths.filter { $0.hasPrefix(path + ".corrupt-") }
      #expect(backups.count == 1)
      #expect(backups.first.flatMap(files.contents(atPath:)) == garbage)
    }
  }

  @Test func externalEditReachesTheValue() throws {
    environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      files.setContents(Data("41".utf8), atPath: path)
      #expect(count == 41)
      files.setContents(Data("oops".utf8), atPath: path)
      #expect(count == 41)
      #expect($count.loadError != nil)
      files.setContents(Data("42".utf8), atPath: path)
      #expect(count == 42)
      #expect($count.loadError == nil)
      files.setContents(nil, atPath: path)
      #expect(count == 0)
    }
  }

  @Test func ownWritesDoNotEchoBack() async throws {
    try await environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      $count.withLock { $0 = 1 }
      let changes = CountBox()
      withObservationTracking {
        _ = count
      } onChange: {
        changes.increment()
      }
      try await $count.save()
      clock.advance(by: .seconds(2))
      #expect(changes.value == 0)
      #expect(count == 1)
    }
  }

  @Test func aChangeWaitingForItsWriteWinsOverAnOutsideEdit() throws {
    environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      $count.withLock { $0 = 2 }
      $count.withLock { $0 = 1 }
      files.setContents(Data("5".utf8), atPath: path)
      #expect(count == 1, "the outside edit replaced a change still waiting for its write")
      clock.advance(by: .seconds(1))
      #expect(count == 1)
      #expect(files.contents(atPath: path) == Data("1".utf8))
      #expect($count.saveError == nil)
      // Once nothing waits, an outside edit is shown again.
      files.setContents(Data("6".utf8), atPath: path)
      #expect(count == 6)
    }
  }

  @Test func reloadTakesTheFileAndDropsTheOlderPendingChange() async throws {
    try await environment.withValue {
      @Shared(.fileStorage(url)) var count = 0
      $count.withLock { $0 = 2 }
      $count.withLock { $0 = 3 }
      // Another writer, unseen while the change waits for its window.
      files.setContents(Data("1".utf8), atPath: path)
      try await $count.load()
      #expect(count == 1)
      clock.advance(by: .seconds(1))
      #expect(files.contents(atPath: path) == Data("1".utf8))
      #expect(files.writeCount(atPath: path) == 1, "only the first change was written")
    }
  }

  @Test func lastHandleGoneFlushesThePendingWrite() throws {
    environment.withValue {
      do {
        @Shared(.fileStorage(url)) var count = 0
        $count.withLock { $0 = 3 }
      }
      #expect(files.contents(atPath: path) == Data("3".utf8))
    }
  }

  @Test func lastHandleGoneReportsAFlushThatFails() {
    let faulty = FaultyFileSystem(files: files)
    faulty.environment(clock: clock, log: log).withValue {
      do {
        @Shared(.fileStorage(url)) var count = 0
        $count.withLock { $0 = 3 }
        $count.withLock { $0 = 4 }
        faulty.failNextWrite(.beforeReplacing)
      }
      #expect(files.contents(atPath: path) == Data("3".utf8))
      let report = log.all.first { $0.contains("when its last handle went away") }
      #expect(report?.contains(path) == true, "\(log.all)")
      #expect(report?.contains("disk full") == true, "\(log.all)")
    }
  }

  @Test func ownWriteStaysOursWhenOnlyTheFolderSyncFails() async {
    let faulty = FaultyFileSystem(files: files)
    await faulty.environment(clock: clock, log: log).withValue {
      @Shared(.fileStorage(url)) var count = 0
      $count.withLock { $0 = 1 }
      $count.withLock { $0 = 2 }
      faulty.failNextWrite(.afterReplacing)
      await #expect(throws: FileStorageError.self) { try await $count.save() }
      #expect(files.contents(atPath: path) == Data("2".utf8))
      let changes = CountBox()
      withObservationTracking {
        _ = count
      } onChange: {
        changes.increment()
      }
      // The events of the writes arrive after the error: the file holds the key's own value.
      faulty.deliverHeldEvents()
      #expect(changes.value == 0, "the key's own write came back as a change")
      #expect(count == 2)
    }
  }

  @Test func aFailedWriteIsTriedOnceMoreThenReportedAndOutsideChangesShowAgain() {
    files.setContents(Data("1".utf8), atPath: path)
    let faulty = FaultyFileSystem(files: files)
    faulty.environment(clock: clock, log: log).withValue {
      @Shared(.fileStorage(url)) var count = 0
      #expect(count == 1)
      faulty.failNextWrite(.beforeReplacing)
      faulty.failNextWrite(.beforeReplacing)
      // Written at once, fails; tried again when the window closes, fails, and is reported.
      $count.withLock { $0 = 2 }
      #expect($count.saveError == nil, "reported before the second try")
      clock.advance(by: .seconds(1))
      #expect($count.saveError != nil)
      #expect(count == 2, "the value was rolled back")
      #expect(files.contents(atPath: path) == Data("1".utf8))
      // Nothing waits any more: another process's change is shown.
      files.setContents(Data("5".utf8), atPath: path)
      faulty.deliverHeldEvents()
      #expect(count == 5)
    }
  }

  @Test func customCoding() throws {
    environment.withValue {
      let text = Shared(
        wrappedValue: "hello",
        .fileStorage(
          url,
          decode: { @Sendable in String(decoding: $0, as: UTF8.self) },
          encode: { @Sendable in Data($0.utf8) }))
      text.withLock { $0 = "bye" }
      clock.advance(by: .seconds(1))
      #expect(files.contents(atPath: path) == Data("bye".utf8))
    }
  }

  @Test func sameFileSameReferenceRegardlessOfCoders() throws {
    environment.withValue {
      let a = Shared(wrappedValue: 1, .fileStorage(url))
      let b = Shared(wrappedValue: 2, .fileStorage(url, writeWindow: .seconds(9)))
      #expect(b.wrappedValue == 1)
      _ = a
    }
  }
}
