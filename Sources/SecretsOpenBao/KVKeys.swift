import Foundation
import Secrets

/// What `SecretStorage.openBao` does for each key: KV v2 reads and check-and-set writes.
///
/// A cluster that has just changed leader can answer from a state older than one this process
/// has already seen (the new leader has the writes but has not applied them yet): a read gives
/// an older version, a check-and-set write fails against one. That is not another writer's
/// change but a node catching up, so the request is made again, for up to the request timeout,
/// until the answer is at least as new as what this process saw.
final class KVKeys: Sendable {
  let client: OpenBaoClient
  let versions = KVVersions()

  init(_ client: OpenBaoClient) { self.client = client }

  func path(_ address: SecretItemAddress) -> String {
    KVPath(address, folder: client.configuration.folder).text
  }

  func read(_ address: SecretItemAddress) throws(OpenBaoError) -> [UInt8]? {
    let path = path(address)
    let deadline = ContinuousClock.now + client.configuration.requestTimeout
    while true {
      let secret = try client.read(path)
      var state = OpenBaoClient.VersionState(version: secret?.version ?? 0, isDeleted: secret == nil)
      if secret == nil, let current = try client.versionState(path) {
        // A version written between the two requests: read again rather than base later
        // writes on a version whose value was never read.
        if !current.isDeleted, ContinuousClock.now < deadline {
          Thread.sleep(forTimeInterval: 0.05)
          continue
        }
        state = current
      }
      if let known = versions.known(path), state.version < known, ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.05)
        continue
      }
      versions.read(path, state)
      return secret.map { Array($0.field("value").map { Data($0.utf8) } ?? $0.data) }
    }
  }

  func write(_ address: SecretItemAddress, _ bytes: [UInt8]) throws(OpenBaoError) {
    let path = path(address)
    var base = versions.known(path) ?? 0
    if versions.known(path) == nil, let current = try client.versionState(path) { base = current.version }
    let deadline = ContinuousClock.now + client.configuration.requestTimeout
    while true {
      do throws(OpenBaoError) {
        let version = try client.write(
          path, fields: ["value": String(decoding: bytes, as: UTF8.self)], checkAndSet: base)
        versions.wrote(path, OpenBaoClient.VersionState(version: version, isDeleted: false))
        return
      } catch .conflict(_, let current) where (current ?? .max) < base && ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      } catch {
        if case .conflict = error { versions.forgetPolled(path) }
        throw error
      }
    }
  }

  /// Deletes exactly the version this process saw: when another was written meanwhile, it
  /// stays, and the delete is a conflict.
  func delete(_ address: SecretItemAddress) throws(OpenBaoError) {
    let path = path(address)
    guard let current = try client.versionState(path), !current.isDeleted else { return }
    let base = versions.known(path) ?? current.version
    if base == current.version { try client.delete(path, version: base) }
    guard base == current.version, try client.versionState(path)?.version == base else {
      versions.forgetPolled(path)
      throw .conflict(path: client.dataPath(path, mount: nil), version: nil)
    }
    versions.wrote(path, OpenBaoClient.VersionState(version: base, isDeleted: true))
  }
}
