import Foundation
import Glibc
import SecretTestSupport
import SharedState
import Testing

@Suite(".fileStorage on the real file system")
struct FileStorageLiveTests {
  @Test func atomicWriteKeepsPermissionsAndLeavesNoTemporaryFile() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.file("settings.json")
    try Data("1".utf8).write(to: url)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    let clock = TestWriteClock()
    try await fileSystemEnvironment(clock: clock).withValue {
      @Shared(.fileStorage(url)) var value = 0
      #expect(value == 1)
      $value.withLock { $0 = 2 }
      try await $value.save()
      #expect(try Data(contentsOf: url) == Data("2".utf8))
      let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
      #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["settings.json"])
    }
  }

  @Test func aReaderInAMissingFolderSeesTheFileAnotherWriterCreates() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.url.appending(path: "a/b/state.json")
    try await fileSystemEnvironment().withValue {
      @SharedReader(.fileStorage(url)) var value = 0
      #expect(!FileManager.default.fileExists(atPath: url.path), "reading alone wrote the file")
      let stream = $value.values
      // Another program's first write, the way it makes a file: folder, write aside, rename.
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      let aside = url.deletingLastPathComponent().appending(path: ".state.json.tmp")
      try Data("4".utf8).write(to: aside)
      #expect(rename(aside.path, url.path) == 0)
      #expect(await firstValue(of: stream) { $0 == 4 } == 4)
    }
  }

  @Test func corruptFileIsKeptOnDiskBesideTheNewOne() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.file("notes.json")
    let garbage = Data("[{\"title\": trunc".utf8)
    try garbage.write(to: url)
    try await fileSystemEnvironment().withValue {
      @Shared(.fileStorage(url)) var notes: [Note] = []
      let error = try #require($notes.loadError)
      #expect("\(error)".contains(url.path))
      $notes.withLock { $0 = [Note(title: "fresh")] }
      // Written at once, on another thread.
      try await eventually("the change written") {
        (try? JSONDecoder().decode([Note].self, from: Data(contentsOf: url))) == [Note(title: "fresh")]
      }
      let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
      let backup = try #require(names.first { $0.hasPrefix("notes.json.corrupt-") })
      #expect(try Data(contentsOf: folder.file(backup)) == garbage)
    }
  }

  @Test func externalEditsReachTheValueInPlaceAndByRename() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.file("count.json")
    try Data("1".utf8).write(to: url)
    let log = IssueLog()
    try await fileSystemEnvironment(log: log).withValue {
      @Shared(.fileStorage(url)) var count = 0
      #expect(log.all.isEmpty, "the watch did not start")
      #expect(count == 1)
      let stream = $count.values

      // In place (open, truncate, write, close).
      let handle = try FileHandle(forWritingTo: url)
      try handle.truncate(atOffset: 0)
      try handle.write(contentsOf: Data("2".utf8))
      try handle.close()
      #expect(
        await firstValue(of: stream) { $0 == 2 } == 2,
        "\(log.all) loadError: \(String(describing: $count.loadError)) value: \(count)")

      // Atomically, the way editors and other processes replace files.
      let temporary = folder.file(".count.json.tmp")
      try Data("3".utf8).write(to: temporary)
      #expect(rename(temporary.path, url.path) == 0)
      #expect(await firstValue(of: $count.values) { $0 == 3 } == 3)
    }
  }
}

@Suite("Across processes", .serialized)
struct ProcessTests {
  /// A child with a value waiting in its write window (after a first change, -1, written at once)
  /// receives a signal.
  struct SignalCase: Sendable, CustomTestStringConvertible {
    /// The child's mode (see `SharedStateChild`).
    var mode: String
    var signal: Int32
    var value: String
    /// How the host's disposition (the default action or its handler) ends the child.
    var ending: ChildProcess.Termination
    /// What the file holds after.
    var written: String
    var testDescription: String
  }

  static let signalCases = [
    SignalCase(
      mode: "window", signal: SIGTERM, value: "77", ending: .signalled(SIGTERM), written: "77",
      testDescription: "SIGTERM during an open window still writes"),
    SignalCase(
      mode: "window", signal: SIGINT, value: "77", ending: .signalled(SIGINT), written: "77",
      testDescription: "SIGINT during an open window still writes"),
    SignalCase(
      mode: "opt-out", signal: SIGTERM, value: "1", ending: .signalled(SIGTERM), written: "-1",
      testDescription: "opting out leaves signals to the host"),
    SignalCase(
      mode: "host-handler", signal: SIGTERM, value: "5", ending: .exited(42), written: "5",
      testDescription: "signal handling chains to the host handler"),
  ]

  @Test(arguments: signalCases)
  func signalWithAPendingWrite(_ signalCase: SignalCase) throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.file("pending.json")
    let child = try HelperProcess([signalCase.mode, url.path, signalCase.value])
    try child.expectLine("ready")
    #expect(FileManager.default.contents(atPath: url.path) == Data("-1".utf8))
    child.signal(signalCase.signal)
    #expect(child.wait() == signalCase.ending)
    #expect(FileManager.default.contents(atPath: url.path) == Data(signalCase.written.utf8))
  }

  @Test func normalExitFlushesPendingWrites() throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.file("exit.json")
    let child = try HelperProcess(["exit", url.path, "9"])
    #expect(child.wait() == .exited(0))
    #expect(try Data(contentsOf: url) == Data("9".utf8))
  }

  @Test func twoProcessesSharingOneFileConverge() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let url = folder.file("shared.json")
    try await fileSystemEnvironment().withValue {
      @Shared(.fileStorage(url)) var value = 0
      $value.withLock { $0 = 1 }
      try await $value.save()

      // The other process sees what this one writes…
      let watcher = try HelperProcess(["await", url.path, "2"])
      try watcher.expectLine("ready 1")
      $value.withLock { $0 = 2 }
      try await $value.save()
      try watcher.expectLine("seen 2")
      #expect(watcher.wait() == .exited(0))

      // …and this one sees what the other writes.
      let stream = $value.values
      let writer = try HelperProcess(["set", url.path, "3"])
      try writer.expectLine("loaded 2")
      #expect(writer.wait() == .exited(0))
      #expect(await firstValue(of: stream) { $0 == 3 } == 3)
      #expect(try Data(contentsOf: url) == Data("3".utf8))
    }
  }
}
