import Foundation
import SharedState
import Synchronization

/// One thread per key store, running while any key watches: once per poll interval it asks
/// OpenBao for the version of every watched secret (each request blocks) and tells the watchers
/// of each secret whose version changed.
final class KVPoller: Sendable {
  private struct Watcher {
    let path: String
    let onChange: @Sendable () -> Void
  }

  private struct State {
    var watchers: [UInt64: Watcher] = [:]
    var nextWatcher: UInt64 = 0
    /// Which thread may run: a thread whose generation is not this one ends.
    var generation: UInt64 = 0
    var running = false
  }

  private let client: OpenBaoClient
  private let versions: KVVersions
  private let state = Mutex(State())
  private let wake = DispatchSemaphore(value: 0)

  init(client: OpenBaoClient, versions: KVVersions) {
    self.client = client
    self.versions = versions
  }

  /// Calls `onChange` whenever the version of the secret at `path` changes, until the
  /// subscription is cancelled.
  func watch(_ path: String, _ onChange: @escaping @Sendable () -> Void) -> SharedSubscription {
    let (id, start) = state.withLock { state -> (UInt64, UInt64?) in
      defer { state.nextWatcher += 1 }
      state.watchers[state.nextWatcher] = Watcher(path: path, onChange: onChange)
      guard !state.running else { return (state.nextWatcher, nil) }
      state.running = true
      state.generation += 1
      return (state.nextWatcher, state.generation)
    }
    if let start { Thread.detachNewThread { [self] in poll(generation: start) } }
    return SharedSubscription { [self] in stopWatching(id) }
  }

  private func stopWatching(_ id: UInt64) {
    let last = state.withLock { state -> Bool in
      state.watchers[id] = nil
      guard state.watchers.isEmpty, state.running else { return false }
      state.running = false
      state.generation += 1
      return true
    }
    if last { wake.signal() }
  }

  private func poll(generation: UInt64) {
    let interval = client.configuration.pollInterval.seconds
    while true {
      _ = wake.wait(timeout: .now() + interval)
      let watchers = state.withLock { $0.generation == generation ? Array($0.watchers.values) : nil }
      guard let watchers else { return }
      for (path, watchers) in Dictionary(grouping: watchers, by: \.path) {
        let current: OpenBaoClient.VersionState?
        do { current = try client.versionState(path) } catch {
          continue  // A server that cannot answer now is asked again at the next tick.
        }
        guard versions.polled(path, current) else { continue }
        for watcher in watchers { watcher.onChange() }
      }
    }
  }
}
