extension SecretClient {
  /// The secret of the item whose attributes include `attributes`, or `nil` when there is none.
  ///
  /// When several items match, an item whose attributes are exactly `attributes` is preferred.
  /// Unlike libsecret's lookup, a match in a locked collection is reported as
  /// ``SecretError/locked(path:)``, not silently as absent, and no unlock prompt is raised.
  ///
  /// - Parameters:
  ///   - attributes: the attributes that identify the item; must not be empty.
  ///   - collection: search only this collection; `nil` searches them all.
  ///   - exactly: ignore items that carry attributes beyond `attributes` (costs a round trip).
  public func read(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) throws(SecretError) -> SecretValue? {
    try readItem(attributes, in: collection, exactly: exactly)?.value
  }

  /// ``read(_:in:exactly:)``, with the path of the item it read.
  package func readItem(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) throws(SecretError) -> (path: String, value: SecretValue)? {
    try Self.validate(attributes)
    return try withService { service throws(SecretError) in
      let (found, locked) = try Self.itemPaths(attributes, in: collection, on: service)
      let unlocked = exactly ? try Self.exactMatches(found, attributes, on: service) : found
      guard let path = exactly ? unlocked.first : try Self.preferredItem(unlocked, exactly: attributes, on: service)
      else {
        if let lockedPath = locked.first { throw .locked(path: Self.collectionPath(ofItem: lockedPath)) }
        return nil
      }
      return try service.secret(at: path).map { (path, $0) }
    }
  }

  /// A handle on the item at `path`, to reach it again without a search (making it costs a round trip).
  package func itemHandle(at path: String) throws(SecretError) -> ItemHandle {
    try withService { service throws(SecretError) in try ItemHandle(service: service, path: path) }
  }

  /// The secret of the item `handle` reaches when its attributes are exactly `attributes`;
  /// nil when the handle no longer speaks for that item (another provider, other attributes)
  /// or the provider gives no secret (locked). Two round trips.
  package func secret(of handle: ItemHandle, ifAttributesAre attributes: [String: String]) throws(SecretError)
    -> SecretValue?
  {
    guard try handle.isCurrent({ Self.sameAttributes($0, attributes) }) else { return nil }
    return try handle.loadSecret()
  }

  /// Replaces the secret of the item `handle` reaches when its attributes are exactly
  /// `attributes`; returns false, changing nothing, when they are not. Two round trips.
  package func replaceSecret(
    _ value: SecretValue, of handle: ItemHandle, ifAttributesAre attributes: [String: String]
  ) throws(SecretError) -> Bool {
    guard try handle.isCurrent({ Self.sameAttributes($0, attributes) }) else { return false }
    try handle.setSecret(value)
    return true
  }

  /// Stores `value` in the item with these attributes, replacing its secret if it exists.
  ///
  /// Providers decide which item "has these attributes": gnome-keyring replaces any item whose
  /// attributes include them. With `exactly`, only an item whose attributes are exactly these is
  /// replaced and items with more attributes are left alone (this costs a round trip or two).
  ///
  /// - Parameters:
  ///   - value: The secret to store.
  ///   - attributes: The item's attributes, which find it again.
  ///   - label: What people see in keyring managers; defaults to the attributes.
  ///   - collection: Where to create the item; the `default` alias unless given.
  ///   - exactly: Replace only an item whose attributes are exactly these.
  public func write(
    _ value: SecretValue, attributes: [String: String], label: String? = nil, in collection: CollectionID = .default,
    exactly: Bool = false
  ) throws(SecretError) {
    try Self.validate(attributes)
    let label = label ?? attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    try Self.validate(text: label, what: "label")
    try withService { service throws(SecretError) in
      let collectionPath = try Self.path(of: collection, on: service)
      guard exactly else {
        try service.createItem(in: collectionPath, attributes: attributes, label: label, value: value, replace: true)
        return
      }
      let (found, _) = try Self.itemPaths(attributes, inCollectionAt: collectionPath, on: service)
      let exact = try Self.exactMatches(found, attributes, on: service)
      if exact.count == found.count {
        // No item carries more attributes, so the provider's replace can only hit this one.
        try service.createItem(in: collectionPath, attributes: attributes, label: label, value: value, replace: true)
      } else if let path = exact.first {
        try service.setSecret(value, at: path)
      } else {
        try service.createItem(in: collectionPath, attributes: attributes, label: label, value: value, replace: false)
      }
    }
  }

  /// Deletes every item whose attributes include `attributes` (or, with `exactly`, are exactly
  /// `attributes`); returns whether any was deleted.
  @discardableResult
  public func delete(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) throws(SecretError) -> Bool {
    try Self.validate(attributes)
    return try withService { service throws(SecretError) in
      let (found, locked) = try Self.itemPaths(attributes, in: collection, on: service)
      let unlocked = exactly ? try Self.exactMatches(found, attributes, on: service) : found
      if unlocked.isEmpty, let lockedPath = locked.first {
        throw .locked(path: Self.collectionPath(ofItem: lockedPath))
      }
      for path in unlocked { try service.deleteItem(at: path) }
      return !unlocked.isEmpty
    }
  }

  /// Items whose attributes include `attributes` (all items when empty), with labels and
  /// attributes; secrets only when `includeSecrets` is set, and only for unlocked items.
  public func search(
    _ attributes: [String: String] = [:], includeSecrets: Bool = false, in collection: CollectionID? = nil
  ) throws(SecretError) -> [SecretItem] {
    try Self.validatePairs(attributes)
    return try withService { service throws(SecretError) in
      guard let collection else { return try service.searchItems(attributes, loadSecrets: includeSecrets) }
      // Secrets are fetched only for items of the collection, never for the others.
      let path = try Self.path(of: collection, on: service)
      var items = try service.searchItems(attributes, loadSecrets: false).filter { $0.collectionPath == path }
      if includeSecrets {
        let secrets = try service.secrets(at: items.filter { !$0.isLocked }.map(\.path))
        for index in items.indices { items[index].secret = secrets[items[index].path] }
      }
      return items
    }
  }

  /// Matching items, split by lock state, in `collection` when one is given.
  static func itemPaths(
    _ attributes: [String: String], in collection: CollectionID?, on service: ServiceHandle
  ) throws(SecretError) -> (unlocked: [String], locked: [String]) {
    var collectionPath: String?
    if let collection { collectionPath = try path(of: collection, on: service) }
    return try itemPaths(attributes, inCollectionAt: collectionPath, on: service)
  }

  /// Matching items, split by lock state, in the collection at `collectionPath` when given.
  private static func itemPaths(
    _ attributes: [String: String], inCollectionAt collectionPath: String?, on service: ServiceHandle
  ) throws(SecretError) -> (unlocked: [String], locked: [String]) {
    let (unlocked, locked) = try service.searchPaths(attributes)
    guard let collectionPath else { return (unlocked, locked) }
    let prefix = collectionPath + "/"
    return (unlocked.filter { $0.hasPrefix(prefix) }, locked.filter { $0.hasPrefix(prefix) })
  }

  private static func exactMatches(
    _ paths: [String], _ attributes: [String: String], on service: ServiceHandle
  ) throws(SecretError) -> [String] {
    var matches: [String] = []
    for path in paths where try sameAttributes(service.attributes(at: path), attributes) {
      matches.append(path)
    }
    return matches
  }

  /// Equal attributes, ignoring `xdg:schema`, which gnome-keyring adds on its own (some time
  /// later) to items stored without a schema. Other `xdg:` attributes, such as the expiry
  /// secretd honours, count.
  static func sameAttributes(_ stored: [String: String], _ wanted: [String: String]) -> Bool {
    stored.filter { $0.key != "xdg:schema" } == wanted.filter { $0.key != "xdg:schema" }
  }

  private static func preferredItem(
    _ paths: [String], exactly attributes: [String: String], on service: ServiceHandle
  ) throws(SecretError) -> String? {
    guard paths.count > 1 else { return paths.first }
    return try exactMatches(paths, attributes, on: service).first ?? paths.first
  }

  static func collectionPath(ofItem path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[..<slash])
  }

  static func validate(_ attributes: [String: String]) throws(SecretError) {
    guard !attributes.isEmpty else {
      throw .invalidArgument("an item needs at least one attribute to be found by, such as service and account")
    }
    try validatePairs(attributes)
  }

  /// Names and values D-Bus can carry; an empty set passes (a search of everything).
  static func validatePairs(_ attributes: [String: String]) throws(SecretError) {
    for (name, value) in attributes {
      guard !name.isEmpty else { throw .invalidArgument("an attribute name is empty") }
      try validate(text: name, what: "attribute name")
      try validate(text: value, what: "value of attribute \(name)")
    }
  }

  static func validate(text: String, what: String) throws(SecretError) {
    guard !text.utf8.contains(0) else {
      throw .invalidArgument("the \(what) contains a NUL character, which D-Bus strings cannot carry")
    }
  }
}
