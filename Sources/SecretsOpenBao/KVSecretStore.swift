import SharedState

/// One key's secret in OpenBao's KV version 2 engine, as a `PersistentStore`: read and written
/// with check-and-set (``KVKeys``), watched by polling its version (``KVPoller``).
struct KVSecretStore: PersistentStore {
  /// The secret's path inside the mount: `FOLDER/SERVICE/ACCOUNT`.
  let path: String
  let keys: KVKeys
  let poller: KVPoller

  /// `the OpenBao secret secret/data/SERVICE/ACCOUNT`.
  var description: String { "the OpenBao secret \(keys.client.dataPath(path, mount: nil))" }

  func read() throws -> [UInt8]? { try keys.read(path) }
  func write(_ bytes: [UInt8]) throws { try keys.write(path, bytes) }
  func delete() throws { try keys.delete(path) }

  /// In a secret of their own beside the key's: `PATH.undecodable-STAMP`.
  func keepCopy(of bytes: [UInt8], stamp: String) throws { try keys.keepCopy(of: bytes, at: path, stamp: stamp) }

  /// Polls the secret's version; never fails to start (a server that cannot answer is asked
  /// again at the next poll).
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
    poller.watch(path, onChange)
  }

  /// No read before each write: check-and-set already refuses to overwrite contents this
  /// process has not read, and undecodable contents it read are kept from that read.
  var readsBeforeWriting: Bool { false }

  /// Every write is a version (kept up to the mount's `max_versions`): changes wait for their
  /// window, so a change and the `save()` after it make one version, and history is not halved.
  var writesFirstChangeAtOnce: Bool { false }

  /// Writes go back to the version they were based on before the read the core discarded, so
  /// the newer version that read found is not overwritten unseen.
  func readDiscarded() { keys.versions.readDiscarded(path) }
}
