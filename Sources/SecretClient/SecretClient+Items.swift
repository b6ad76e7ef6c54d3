import SecretAddress

extension SecretClient {
  /// The secret of the item whose attributes include `attributes`, or `nil` when there is none.
  ///
  /// When several items match, the item `attributes` name (``isNamed(_:by:)``) is preferred.
  /// Unlike libsecret's lookup, a match in a locked collection is reported as
  /// ``SecretError/locked(path:)``, not silently as absent, and no unlock prompt is raised.
  ///
  /// - Parameters:
  ///   - attributes: the attributes that identify the item; must not be empty.
  ///   - collection: search only this collection; `nil` searches them all.
  ///   - exactly: read only the item `attributes` name (``isNamed(_:by:)``), as
  ///     `read(service:account:in:)` does; items with more attributes are ignored.
  public func read(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) throws(SecretError) -> SecretValue? {
    try readItem(attributes, in: collection, exactly: exactly)?.value
  }

  /// ``read(_:in:exactly:)``, with the path of the item it read.
  package func readItem(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) throws(SecretError) -> (path: String, value: SecretValue)? {
    if exactly { return try readNamed(attributes, in: collection) }
    try Self.validate(attributes)
    return try withService { service throws(SecretError) in
      let (unlocked, locked) = try Self.itemPaths(attributes, in: collection, on: service, openingSession: true)
      guard let path = try Self.preferredItem(unlocked, namedBy: attributes, on: service) else {
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

  /// The secret of the item `handle` reaches when it is the one `address` names
  /// (``isNamed(_:by:)``); nil when the handle no longer speaks for that item (another
  /// provider, other attributes) or the provider gives no secret (locked). Two round trips.
  package func secret(of handle: ItemHandle, ifNamedBy address: [String: String]) throws(SecretError)
    -> SecretValue?
  {
    guard try handle.isCurrent({ Self.isNamed($0, by: address) }) else { return nil }
    return try handle.loadSecret()
  }

  /// Replaces the secret of the item `handle` reaches when it already is what
  /// ``write(_:attributes:label:in:exactly:)`` would make of `attributes` (named by them, with
  /// the same expiry); returns false, changing nothing, when it is not. Two round trips.
  package func replaceSecret(
    _ value: SecretValue, of handle: ItemHandle, ifAttributesAre attributes: [String: String]
  ) throws(SecretError) -> Bool {
    guard try handle.isCurrent({ Self.isAsWritten($0, attributes) }) else { return false }
    try handle.setSecret(value)
    return true
  }

  /// Stores `value` in the item with these attributes, replacing its secret if it exists.
  ///
  /// Providers decide which item "has these attributes": gnome-keyring replaces any item whose
  /// attributes include them. With `exactly`, the item these attributes name
  /// (``isNamed(_:by:)``) is replaced and becomes what they say, its expiry included: written
  /// without `xdg:expires` it no longer expires. Items with more attributes are left alone, and
  /// other items the attributes name in the collection (written twice by older tools) are
  /// deleted, so that one item remains. On secretd, whose replace takes only the item the
  /// attributes name, this is one round trip once the connection knows the item; elsewhere a
  /// search comes first.
  ///
  /// - Parameters:
  ///   - value: The secret to store.
  ///   - attributes: The item's attributes, which find it again.
  ///   - label: What people see in keyring managers; defaults to the attributes.
  ///   - collection: Where to create the item; the `default` alias unless given.
  ///   - exactly: Replace only the item these attributes name.
  public func write(
    _ value: SecretValue, attributes: [String: String], label: String? = nil, in collection: CollectionID = .default,
    exactly: Bool = false
  ) throws(SecretError) {
    try Self.validate(attributes)
    let label = label ?? attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    try Self.validate(text: label, what: "label")
    let item = NewItem(value: value, attributes: attributes, label: label)
    try withService { service throws(SecretError) in
      guard exactly else {
        _ = try Self.create(item, in: collection, replace: true, on: service)
        return
      }
      try service.countAddressCall()
      if try service.providerIsSecretd() {
        try Self.writeReplacing(item, in: collection, on: service)
      } else {
        try Self.writeNamed(item, inCollectionAt: try Self.path(of: collection, on: service), on: service)
      }
    }
  }

  /// Creates a new item in `collection`, never replacing one, and returns its object path: for
  /// items no address names, such as a keyring's notes (whose only attribute is `xdg:schema`),
  /// which `write(_:attributes:label:in:exactly:)` would take for one another.
  public func add(
    _ value: SecretValue, attributes: [String: String], label: String, in collection: CollectionID = .default
  ) throws(SecretError) -> String {
    try Self.validate(attributes)
    try Self.validate(text: label, what: "label")
    let item = NewItem(value: value, attributes: attributes, label: label)
    return try withService { service throws(SecretError) in
      try Self.create(item, in: collection, replace: false, on: service)
    }
  }

  /// What a write makes.
  struct NewItem {
    let value: SecretValue
    let attributes: [String: String]
    let label: String
  }

  /// Creates `item` in `collection` (an alias is sent as its own object path, which the
  /// provider resolves, as libsecret's store does) and returns its path.
  private static func create(_ item: NewItem, in collection: CollectionID, replace: Bool, on service: ServiceHandle)
    throws(SecretError) -> String
  {
    do {
      return try service.createItem(
        in: collection.objectPath, attributes: item.attributes, label: item.label, value: item.value,
        replace: replace)
    } catch .noSuchObject(let path) where path == collection.objectPath {
      throw .noSuchObject(path: collection.errorName)
    } catch .locked(let path) where path == collection.objectPath {
      throw .locked(path: (try? Self.path(of: collection, on: service)) ?? path)
    }
  }

  /// On secretd: its replace takes only the item the attributes name, so the write is one
  /// `CreateItem`. Other items named alike (written twice by another tool) are then searched
  /// for and deleted, unless the connection knows from the signals that came before the answer
  /// that there are none; items created or changed since with attributes it does not know are
  /// read first, all at once.
  private static func writeReplacing(_ item: NewItem, in collection: CollectionID, on service: ServiceHandle)
    throws(SecretError)
  {
    let address = address(of: item.attributes)
    let mark = service.mirror.mark()
    let written = try create(item, in: collection, replace: true, on: service)
    service.mirror.learnWritten(item.attributes, of: written, since: mark)
    if service.mirror.isSole(written, named: address) { return }
    let unknown = service.mirror.unknownItems(besides: written, named: address)
    if !unknown.isEmpty {
      _ = try service.namedItems(unknown, by: address)
      if service.mirror.isSole(written, named: address) { return }
    }
    let searched = service.mirror.mark()
    let (found, _) = try itemPaths(address, inCollectionAt: collectionPath(ofItem: written), on: service)
    for other in try service.namedItems(found.filter { $0 != written }, by: address) {
      try service.deleteItem(at: other.path)
    }
    service.mirror.recordSole(written, named: address, since: searched)
  }

  /// Makes the item `attributes` name in the collection at `collectionPath` hold `value` and
  /// exactly `attributes`, then deletes the others they name.
  ///
  /// The provider's own replace is used only where it cannot hit an item the attributes do not
  /// name: when every item that includes the address is named by it (gnome-keyring replaces any
  /// item that includes the attributes sent). Otherwise a named item that already has these
  /// attributes gets the secret alone, and else a new item is made.
  private static func writeNamed(_ item: NewItem, inCollectionAt collectionPath: String, on service: ServiceHandle)
    throws(SecretError)
  {
    let address = address(of: item.attributes)
    let (found, _) = try itemPaths(address, inCollectionAt: collectionPath, on: service)
    let named = try service.namedItems(found, by: address)
    let mark = service.mirror.mark()
    let written: (path: String, attributes: [String: String])
    if named.count == found.count {
      written = (try create(item, in: .path(collectionPath), replace: true, on: service), item.attributes)
    } else if let same = named.first(where: { isAsWritten($0.attributes, item.attributes) }) {
      try service.setSecret(item.value, at: same.path)
      written = same
    } else {
      written = (try create(item, in: .path(collectionPath), replace: false, on: service), item.attributes)
    }
    service.mirror.learnWritten(written.attributes, of: written.path, since: mark)
    // After the write, so that a failed write never costs the secret that was there.
    for other in named where other.path != written.path { try service.deleteItem(at: other.path) }
  }

  /// Deletes every item whose attributes include `attributes` (or, with `exactly`, every item
  /// they name, ``isNamed(_:by:)``: one, unless several collections hold one); returns whether
  /// any was deleted.
  @discardableResult
  public func delete(
    _ attributes: [String: String], in collection: CollectionID? = nil, exactly: Bool = false
  ) throws(SecretError) -> Bool {
    if exactly { return try deleteNamed(attributes, in: collection) }
    try Self.validate(attributes)
    return try withService { service throws(SecretError) in
      let (unlocked, locked) = try Self.itemPaths(attributes, in: collection, on: service)
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
      // Secrets are fetched only for items of the collection, never for the others.
      let collectionPath = try collection.map { (collection) throws(SecretError) in
        try Self.path(of: collection, on: service)
      }
      return try service.searchItems(attributes, inCollectionAt: collectionPath, loadSecrets: includeSecrets)
    }
  }

  /// Matching items, split by lock state, in `collection` when one is given. With
  /// `openingSession` (a read follows), the connection's transfer session is opened in the same
  /// round trip when there is none yet.
  static func itemPaths(
    _ attributes: [String: String], in collection: CollectionID?, on service: ServiceHandle,
    openingSession: Bool = false
  ) throws(SecretError) -> ItemPaths {
    var collectionPath: String?
    if let collection { collectionPath = try path(of: collection, on: service) }
    return try itemPaths(attributes, inCollectionAt: collectionPath, on: service, openingSession: openingSession)
  }

  /// Matching items, split by lock state, in the collection at `collectionPath` when given.
  private static func itemPaths(
    _ attributes: [String: String], inCollectionAt collectionPath: String?, on service: ServiceHandle,
    openingSession: Bool = false
  ) throws(SecretError) -> ItemPaths {
    let (unlocked, locked) =
      openingSession ? try service.searchPathsOpeningSession(attributes) : try service.searchPaths(attributes)
    guard let collectionPath else { return (unlocked, locked) }
    let prefix = collectionPath + "/"
    return (unlocked.filter { $0.hasPrefix(prefix) }, locked.filter { $0.hasPrefix(prefix) })
  }

  /// Whether an item with the attributes `stored` already is what a write of `attributes` makes:
  /// the same attributes, expiry included, but for an `xdg:schema` the write does not give
  /// (libsecret's tools store one, gnome-keyring may add its own; it changes neither the
  /// address nor the expiry). Not which item an address names: that is ``isNamed(_:by:)``;
  /// this says whether a named item needs more than its secret replaced.
  static func isAsWritten(_ stored: [String: String], _ attributes: [String: String]) -> Bool {
    let schema = AddressRule.schemaAttribute
    guard attributes[schema] == nil, stored[schema] != nil else { return stored == attributes }
    return stored.count == attributes.count + 1 && attributes.allSatisfy { stored[$0.key] == $0.value }
  }

  /// Of several items that include `attributes`, the one they name, else the first.
  private static func preferredItem(
    _ paths: [String], namedBy attributes: [String: String], on service: ServiceHandle
  ) throws(SecretError) -> String? {
    guard paths.count > 1 else { return paths.first }
    return try service.namedItems(paths, by: attributes).first?.path ?? paths.first
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
