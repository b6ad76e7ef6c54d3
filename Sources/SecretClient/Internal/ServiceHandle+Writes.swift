// Secrets written through this connection's transfer session, to the unique name of the
// provider that opened it (see ServiceHandle+Transfer.swift), never through libsecret, whose
// session would go to whoever owns the name and fall back to `plain` without a word.
import CLibSecret
import GLibBridge

extension ServiceHandle {
  /// Creates an item in the collection at `collectionPath` and returns its path. With
  /// `replace`, the provider replaces the item it considers the same (gnome-keyring: any item
  /// whose attributes include these). A provider that asks for a prompt gets it shown (libsecret
  /// does this). Wraps `org.freedesktop.Secret.Collection.CreateItem`.
  @discardableResult
  func createItem(
    in collectionPath: String, attributes: [String: String], label: String, value: SecretValue, replace: Bool
  ) throws(SecretError) -> String {
    let reply = try unlockingOnce(collectionPath) { () throws(SecretError) in
      try createItemReply(in: collectionPath, attributes: attributes, label: label, value: value, replace: replace)
    }
    let (item, prompt) = (reply.child(0)?.string ?? "/", reply.child(1)?.string ?? "/")
    guard item == "/", prompt != "/" else { return item }
    return try prompted(prompt, for: collectionPath)
  }

  private func createItemReply(
    in collectionPath: String, attributes: [String: String], label: String, value: SecretValue, replace: Bool
  ) throws(SecretError) -> Variant {
    try inTransferSession { session throws(SecretError) in
      let properties = DBusValue.array(
        elementType: "{sv}",
        [
          .dictEntry(.string("org.freedesktop.Secret.Item.Label"), .variant(.string(label))),
          .dictEntry(.string("org.freedesktop.Secret.Item.Attributes"), .variant(.stringDictionary(attributes))),
        ])
      return try callObject(
        collectionPath, "org.freedesktop.Secret.Collection", "CreateItem",
        .tuple([properties, try sealed(value, in: session), .boolean(replace)]), replyType: "(oo)",
        destination: session.provider)
    }
  }

  /// Replaces the secret of the item at `path`. Wraps `org.freedesktop.Secret.Item.SetSecret`.
  func setSecret(_ value: SecretValue, at path: String) throws(SecretError) {
    _ = try unlockingOnce(SecretClient.collectionPath(ofItem: path)) { () throws(SecretError) in
      try inTransferSession { session throws(SecretError) in
        try callObject(
          path, "org.freedesktop.Secret.Item", "SetSecret", .tuple([try sealed(value, in: session)]), replyType: "()",
          destination: session.provider)
      }
    }
  }

  /// Runs `write`; when its collection is locked, asks the provider to unlock it (secretd does
  /// at once, gnome-keyring shows its prompt) and runs it once more, as libsecret's store does.
  /// A collection that stays locked is the write's own `locked` error.
  private func unlockingOnce<T>(_ collectionPath: String, _ write: () throws(SecretError) -> T) throws(SecretError)
    -> T
  {
    do {
      return try write()
    } catch .locked(let path) {
      guard let unlocked = try? setLocked(false, paths: [collectionPath]), unlocked > 0 else {
        throw .locked(path: path)
      }
      return try write()
    }
  }

  /// Shows the provider's prompt and returns the object path it completes with.
  /// Wraps `secret_service_prompt_at_dbus_path_sync`.
  private func prompted(_ prompt: String, for object: String) throws(SecretError) -> String {
    let service = try libsecretService()
    let result = try withVariantType("o") { (type) throws(SecretError) in
      try call(object: object) { error in secret_service_prompt_at_dbus_path_sync(service, prompt, nil, type, &error) }
    }
    return Variant(adopting: result).string ?? "/"
  }
}
