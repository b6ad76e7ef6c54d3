import Foundation
import Secrets

/// What `SecretKeyStore.openBao` does for each key's secret: KV v2 reads and check-and-set
/// writes, shared by every key of the store.
///
/// No read gives a version older than the newest this process knows exists (one it read,
/// wrote, or that a check-and-set write ran into): a node behind it (a standby not yet caught
/// up, a new leader still applying its log) is asked again, for up to the request timeout, until
/// it answers at least that. A check-and-set write that fails against an older version than its
/// own base meets such a node too, and is made again.
final class KVKeys: Sendable {
  let client: OpenBaoClient
  let versions = KVVersions()

  init(_ client: OpenBaoClient) { self.client = client }

  func read(_ path: String) throws(OpenBaoError) -> [UInt8]? {
    let deadline = ContinuousClock.now + client.configuration.requestTimeout
    while true {
      let secret = try client.readFields(path)
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
      if state.version < versions.newest(path), ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.05)
        continue
      }
      let bytes = try secret.map { (fields, _) throws(OpenBaoError) in try contents(of: fields, at: path) }
      versions.read(path, state)
      return bytes
    }
  }

  /// A key's stored contents: its field `value`, or, for a secret written by hand without it, the
  /// JSON object of its fields.
  private func contents(of fields: [String: Any], at path: String) throws(OpenBaoError) -> [UInt8] {
    if let value = OpenBaoClient.Secret.text(of: fields["value"]) { return Array(value.utf8) }
    return Array(try client.json(of: fields, at: path))
  }

  /// Writes `bytes` as a new version, check-and-set on the version the keys' value is based on.
  /// A write that met its own earlier, unconfirmed attempt (stored although no answer came) is
  /// recognised: it is not someone else's change.
  func write(_ path: String, _ bytes: [UInt8]) throws(OpenBaoError) {
    var base = versions.base(path) ?? 0
    if versions.base(path) == nil, let current = try client.versionState(path) { base = current.version }
    let deadline = ContinuousClock.now + client.configuration.requestTimeout
    while true {
      do throws(OpenBaoError) {
        let version = try client.write(path, fields: Self.fields(bytes), checkAndSet: base)
        versions.wrote(path, OpenBaoClient.VersionState(version: version, isDeleted: false))
        return
      } catch .conflict(_, let current) where (current ?? .max) < base && ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.05)
      } catch .conflict(let location, let current) {
        if let current, let landed = try earlierWriteStored(path, base: base) {
          versions.wrote(path, OpenBaoClient.VersionState(version: base + 1, isDeleted: false))
          // This very value is stored, and nothing after it: done.
          if current == base + 1, landed == bytes { return }
          base += 1
          continue
        }
        versions.conflicted(path, newest: current)
        throw .conflict(path: location, version: current)
      } catch .writeUnconfirmed(let location, let reason) {
        versions.sentUnconfirmed(path, base: base, bytes: bytes)
        throw .writeUnconfirmed(path: location, reason: reason)
      }
    }
  }

  /// The bytes of this process's write based on `base` that was sent without confirmation,
  /// when version `base + 1` holds them: that write was stored.
  private func earlierWriteStored(_ path: String, base: Int) throws(OpenBaoError) -> [UInt8]? {
    guard let unconfirmed = versions.unconfirmed(path, base: base),
      try client.holds(path, version: base + 1, exactly: Self.fields(unconfirmed.bytes), mount: nil)
    else { return nil }
    return unconfirmed.bytes
  }

  /// Deletes exactly the version this process saw: when another was written meanwhile, it
  /// stays, and the delete is a conflict.
  func delete(_ path: String) throws(OpenBaoError) {
    guard let current = try client.versionState(path), !current.isDeleted else { return }
    let base = versions.base(path) ?? current.version
    if base == current.version { try client.delete(path, version: base) }
    guard base == current.version, try client.versionState(path)?.version == base else {
      versions.conflicted(path, newest: current.version)
      throw .conflict(path: client.dataPath(path, mount: nil), version: current.version)
    }
    versions.wrote(path, OpenBaoClient.VersionState(version: base, isDeleted: true))
  }

  /// Keeps contents that do not decode in a secret of their own beside the key's,
  /// `PATH.undecodable-STAMP`, written only when it does not exist yet.
  func keepCopy(of bytes: [UInt8], at path: String, stamp: String) throws(OpenBaoError) {
    try client.write("\(path).undecodable-\(stamp)", fields: Self.fields(bytes), checkAndSet: 0)
  }

  /// A key's stored contents: its JSON as the field `value`.
  private static func fields(_ bytes: [UInt8]) -> [String: String] {
    ["value": String(decoding: bytes, as: UTF8.self)]
  }
}
