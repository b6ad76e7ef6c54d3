import Foundation
import SharedState
import Synchronization
import Testing

/// When `loadError`, `saveError` and `isLoading` change, as swift-sharing changes them.
@Suite("Loading and error state")
struct LoadingStateTests {
  @Test func aSuccessfulSaveAfterAMutationClearsALoadError() {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    backend.push(.failure(TestFailure(message: "unreadable")))
    #expect(shared.loadError != nil)
    backend.state.withLock { $0.saveFailure = TestFailure(message: "disk full") }
    shared.withLock { $0 = 2 }
    #expect(shared.loadError != nil, "a failed save cleared the load error")
    #expect(shared.saveError != nil)
    backend.state.withLock { $0.saveFailure = nil }
    shared.withLock { $0 = 3 }
    #expect(shared.loadError == nil, "the key holds the value shown: nothing is wrong with reading it")
    #expect(shared.saveError == nil)
  }

  @Test func anExplicitSaveClearsBothErrors() async throws {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    backend.push(.failure(TestFailure(message: "unreadable")))
    try await shared.save()
    #expect(shared.loadError == nil)
    #expect(shared.saveError == nil)
  }

  @Test func anyResultTheKeyPushesEndsTheLoadingItAnnounced() throws {
    let backend = Backend<Int>(stored: 1)
    let shared = Shared(wrappedValue: 0, ControlledKey(backend: backend))
    let subscriber = try #require(backend.state.withLock { $0.subscriber })
    subscriber.yieldLoading()
    #expect(shared.isLoading)
    backend.push(.success(7))
    #expect(!shared.isLoading)
    #expect(shared.wrappedValue == 7)
    subscriber.yieldLoading()
    backend.push(.failure(TestFailure(message: "gone")))
    #expect(!shared.isLoading, "an error pushed by the key left it loading")
  }

  @Test func anExplicitLoadAsksTheKeyOffTheCooperativePoolAndIsAppliedWhenItReturns() async throws {
    let threads = KeyThreads()
    let key = ThreadRecordingKey(threads: threads)
    let reader = SharedReader(wrappedValue: 0, key)
    try await reader.load()
    #expect(reader.wrappedValue == 2)
    #expect(threads.explicitLoadRanInATask == false, "the key's load ran on a thread of Swift's pool")
  }

  @Test func aPersistentKeysExplicitLoadHasFinishedWhenItsLoadReturns() {
    let files = InMemoryFileSystem()
    testEnvironment(files: files).withValue {
      let key = FileStorageKey<Int>.fileStorage(URL(filePath: "/home/test/n.json"))
      files.setContents(Data("5".utf8), atPath: "/home/test/n.json")
      let result = Mutex<Int??>(nil)
      key.load(
        context: .userInitiated, continuation: LoadContinuation { value in result.withLock { $0 = try? value.get() } })
      let loaded = result.withLock { $0 }
      #expect(loaded == .some(.some(5)), "the load had not finished when it returned")
    }
  }
}

/// Whether a key's explicit load ran inside a task.
final class KeyThreads: Sendable {
  private let inTask = Mutex<Bool?>(nil)
  var explicitLoadRanInATask: Bool? { inTask.withLock { $0 } }
  func record() { inTask.withLock { $0 = withUnsafeCurrentTask { $0 != nil } } }
}

/// A key that loads 1 at first and 2 when asked again, recording where it was asked.
private struct ThreadRecordingKey: SharedReaderKey {
  let threads: KeyThreads
  var id: ObjectIdentifier { ObjectIdentifier(threads) }
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    guard case .userInitiated = context else { return continuation.resume(returning: 1) }
    threads.record()
    continuation.resume(returning: 2)
  }
  func subscribe(context: LoadContext<Int>, subscriber: SharedSubscriber<Int>) -> SharedSubscription {
    SharedSubscription {}
  }
}
