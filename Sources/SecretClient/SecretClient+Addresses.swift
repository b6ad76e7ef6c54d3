// Addresses: a service and an optional account name one item, the secret stored with exactly
// those attributes. A service alone is the secret stored with no account, never one of the
// service's accounts: an operation by address never reads, replaces or deletes an item the
// caller did not name. Which item an address names is decided by `AddressRule` alone, which
// secretd shares.
import SecretAddress

extension SecretClient {
  /// The attributes `secret-tool` and this project use for a service and an optional account.
  public static func attributes(service: String, account: String? = nil) -> [String: String] {
    var attributes = ["service": service]
    if let account { attributes["account"] = account }
    return attributes
  }

  /// Whether the item whose attributes are `stored` is the one `address` names: its attributes
  /// are exactly the address's, apart from those that describe an item rather than name it,
  /// `xdg:schema` (libsecret's schema name) and the expiry (`xdg:expires`, `expires-at`), which
  /// are left out of both. Every other attribute counts, `xdg:` ones included. Every call by
  /// address, `read(_:in:exactly:)`, `write(_:attributes:label:in:exactly:)`
  /// and `delete(_:in:exactly:)` with `exactly: true`, and secretd itself decide by it.
  ///
  /// ```swift
  /// SecretClient.isNamed(["service": "s", "xdg:schema": "x"], by: ["service": "s"])         // true
  /// SecretClient.isNamed(["service": "s", "xdg:expires": "1700000000"], by: ["service": "s"])  // true
  /// SecretClient.isNamed(["service": "s", "account": "a"], by: ["service": "s"])            // false
  /// ```
  public static func isNamed(_ stored: [String: String], by address: [String: String]) -> Bool {
    AddressRule.isNamed(stored, by: address)
  }

  /// The attributes among `attributes` that name an item (see ``isNamed(_:by:)``): without the
  /// schema name and the expiry.
  package static func address(of attributes: [String: String]) -> [String: String] {
    AddressRule.address(of: attributes)
  }

  /// The secret stored for `service` and `account`, or `nil` when there is none. Without an
  /// account it is the secret stored with no account: `read(service: "s")` never returns the
  /// secret of `s` and some account. Several items so named (in several collections): the first
  /// the provider lists.
  public func read(service: String, account: String? = nil, in collection: CollectionID? = nil) throws(SecretError)
    -> SecretValue?
  {
    try readNamed(Self.attributes(service: service, account: account), in: collection)?.value
  }

  /// The item `address` names (see ``isNamed(_:by:)``), with its path; nil when there is none.
  /// An item so named in a locked collection is ``SecretError/locked(path:)``. Two round trips
  /// (the search, then the secret with the attributes the connection does not know yet); on a
  /// connection's first call, opening the transfer session shares the search's.
  package func readNamed(_ address: [String: String], in collection: CollectionID? = nil) throws(SecretError)
    -> (path: String, value: SecretValue)?
  {
    try Self.validate(address)
    return try withService { service throws(SecretError) in
      try service.countAddressCall()
      // Searched by the attributes that name the item: it may carry another expiry, or none.
      let (unlocked, locked) = try Self.itemPaths(
        Self.address(of: address), in: collection, on: service, openingSession: true)
      if let (path, secret) = try service.firstNamedSecret(unlocked, by: address) {
        return secret.map { (path, $0) }
      }
      if let path = try service.namedItems(locked, by: address).first?.path {
        throw .locked(path: Self.collectionPath(ofItem: path))
      }
      return nil
    }
  }

  /// Stores the secret for `service` and `account`, replacing only the item they name, whatever
  /// its schema or expiry (it no longer expires): an item with more attributes (another
  /// account of the service, a backup) is left alone.
  public func write(
    _ value: SecretValue, service: String, account: String? = nil, label: String? = nil,
    in collection: CollectionID = .default
  ) throws(SecretError) {
    try write(
      value, attributes: Self.attributes(service: service, account: account), label: label, in: collection,
      exactly: true)
  }

  /// Deletes the secret stored for `service` and `account` (with no account: the one stored
  /// without an account), leaving every other item alone; returns whether there was one.
  @discardableResult
  public func delete(service: String, account: String? = nil, in collection: CollectionID? = nil) throws(SecretError)
    -> Bool
  {
    try delete(Self.attributes(service: service, account: account), in: collection, exactly: true)
  }

  /// Deletes every item `address` names (one, unless several collections hold one), leaving
  /// every other item alone; returns whether there was one. An item so named in a locked
  /// collection, with none unlocked, is ``SecretError/locked(path:)``.
  func deleteNamed(_ address: [String: String], in collection: CollectionID?) throws(SecretError) -> Bool {
    try Self.validate(address)
    return try withService { service throws(SecretError) in
      try service.countAddressCall()
      // Searched by the attributes that name the item: it may carry another expiry, or none.
      let (unlocked, locked) = try Self.itemPaths(Self.address(of: address), in: collection, on: service)
      let named = try service.namedItems(unlocked, by: address).map(\.path)
      if named.isEmpty, let path = try service.namedItems(locked, by: address).first?.path {
        throw .locked(path: Self.collectionPath(ofItem: path))
      }
      for path in named { try service.deleteItem(at: path) }
      return !named.isEmpty
    }
  }

  /// Deletes the item at `path`; returns false when it no longer exists.
  @discardableResult
  package func deleteItem(at path: String) throws(SecretError) -> Bool {
    try withService { service throws(SecretError) in
      do throws(SecretError) {
        try service.deleteItem(at: path)
        return true
      } catch .noSuchObject {
        return false
      }
    }
  }
}
