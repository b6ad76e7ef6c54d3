public import Secrets

extension SecretKeyStore {
  /// Secrets in OpenBao's KV version 2 engine, for a program that runs on many machines: the
  /// same `SecretKey` declarations, set for a scope.
  ///
  /// ```swift
  /// var fleet = SharedEnvironment.current
  /// fleet.secretKeyStore = .openBao(OpenBaoConfiguration())   // BAO_ADDR, BAO_TOKEN
  /// try await fleet.withValue {
  ///   @Shared(.secret(service: "com.example.deploy", account: "api")) var token: Token? = nil
  /// }
  /// ```
  ///
  /// - One KV secret per key, at `MOUNT/data/FOLDER/SERVICE/ACCOUNT` (characters other than
  ///   letters, digits and `._@+-` in service and account are written `%XX`); the value's JSON
  ///   is its field `value`. A secret without that field (written by hand with other fields)
  ///   reads as the JSON object of its fields. The collection of an address does not apply.
  /// - Absent (404, the newest version deleted, or metadata with no version yet) is the
  ///   default, with no error; sealed, forbidden, unreachable and every other failure are
  ///   errors.
  /// - Writes are check-and-set on the version this process last read or wrote: a change made
  ///   by someone else meanwhile is never overwritten, also not by a value that waited for its
  ///   write window. The write fails with ``OpenBaoError/conflict(path:version:)``, and the next
  ///   load (or poll) gives at least the version that caused it, whichever node answers.
  /// - A write sent to a node that died before answering, while the rest of the cluster was
  ///   still electing a leader, fails with ``OpenBaoError/writeUnconfirmed(path:reason:)``; the
  ///   key's next write recognises it if it was stored.
  /// - `nil` deletes the newest version (it can be undeleted; older versions stay).
  /// - Contents that do not decode are kept before the first write over them, in a secret of
  ///   their own beside the key's: `ACCOUNT.undecodable-STAMP`.
  /// - Changes made elsewhere arrive by polling each watched secret's metadata once per
  ///   ``OpenBaoConfiguration/pollInterval``: one small request per interval, no secret sent.
  /// - KV has no search by attributes: live queries (`.secretItems`) declared where this is
  ///   the store fail with `SecretKeyError.searchUnsupported`.
  ///
  /// - Parameter configuration: The servers, mount, folder, credentials and poll interval.
  public static func openBao(_ configuration: OpenBaoConfiguration = OpenBaoConfiguration()) -> SecretKeyStore {
    openBao(OpenBaoClient(configuration))
  }

  /// ``openBao(_:)-(OpenBaoConfiguration)`` over an existing client (sharing its token).
  ///
  /// - Parameter client: The client every key of the store uses.
  public static func openBao(_ client: OpenBaoClient) -> SecretKeyStore {
    let keys = KVKeys(client)
    let poller = KVPoller(client: client, versions: keys.versions)
    return SecretKeyStore(owner: keys) { address in
      KVSecretStore(path: KVPath(address, folder: client.configuration.folder).text, keys: keys, poller: poller)
    }
  }
}
