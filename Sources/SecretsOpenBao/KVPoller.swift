import Foundation
import SharedState
import Synchronization

/// Asks OpenBao for the version of every secret the storage's keys use, once per poll interval,
/// on a thread of its own (each request blocks), and reports the paths that changed.
final class KVPoller: Sendable {
  private let stopped = Atomic<Bool>(false)
  private let wake = DispatchSemaphore(value: 0)

  init(client: OpenBaoClient, versions: KVVersions, onChange: @escaping @Sendable (String?) -> Void) {
    let interval = client.configuration.pollInterval.seconds
    Thread.detachNewThread { [self] in
      while !stopped.load(ordering: .relaxed) {
        _ = wake.wait(timeout: .now() + interval)
        guard !stopped.load(ordering: .relaxed) else { return }
        for path in versions.paths {
          // A server that cannot answer now is asked again at the next tick.
          guard let state = try? client.versionState(path) else { continue }
          if versions.polled(path, state) { onChange(path) }
        }
      }
    }
  }

  func stop() {
    stopped.store(true, ordering: .relaxed)
    wake.signal()
  }
}
