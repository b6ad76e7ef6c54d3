extension SecretStorage {
  /// Items of the Secret Service, reached through `client`. Reads, writes and deletes match the
  /// item's attributes exactly, so the backup items beside it are never read or replaced.
  ///
  /// Values are UTF-8 JSON stored as `text/plain`: `secret-tool lookup` refuses to print any
  /// other content type ("secret does not contain a textual password").
  public static func secretService(_ client: SecretClient) -> SecretStorage {
    SecretStorage(
      read: { address in
        try client.read(address.attributes, in: address.collection, exactly: true)?.bytes
      },
      write: { address, bytes in
        try client.write(
          SecretValue(bytes: bytes, contentType: "text/plain"), attributes: address.attributes,
          label: address.label, in: address.collection, exactly: true)
      },
      delete: { address in
        try client.delete(address.attributes, in: address.collection, exactly: true)
      },
      backup: { address, bytes, stamp in
        try client.write(
          SecretValue(bytes: bytes), attributes: address.attributes.merging(["backup": stamp]) { $1 },
          label: "Backup of undecodable \(address.label), \(stamp)", in: address.collection, exactly: true)
      },
      watch: { collection, onChange in
        let changes = try client.changes(in: collection)
        let task = Task.detached {
          for await _ in changes { onChange() }
        }
        return SharedSubscription { task.cancel() }
      },
      search: { attributes, collection, includeSecrets in
        try client.search(attributes, includeSecrets: includeSecrets, in: collection).map { found in
          FoundItem(
            item: SecretItemInfo(
              path: found.path, label: found.label, attributes: found.attributes,
              collectionPath: found.collectionPath, isLocked: found.isLocked, created: found.created,
              modified: found.modified),
            secret: found.secret?.bytes)
        }
      }
    )
  }
}
