/// Where a ``SecretKey`` keeps its value: the item with exactly the attributes `service` and
/// `account` in a collection. These are the attributes `secret-tool` uses, so
/// `secret-tool lookup service S account A` reads the same item.
public struct SecretItemAddress: Hashable, Sendable, CustomStringConvertible {
  /// The item's `service` attribute: the program or site the secret belongs to.
  public var service: String
  /// The item's `account` attribute: which of the service's secrets it is (a user, a key name).
  public var account: String
  /// The collection that holds the item.
  public var collection: CollectionID

  /// An address from its parts.
  ///
  /// - Parameters:
  ///   - service: The `service` attribute.
  ///   - account: The `account` attribute.
  ///   - collection: Where the item lives; the `default` alias unless given.
  public init(service: String, account: String, collection: CollectionID = .default) {
    self.service = service
    self.account = account
    self.collection = collection
  }

  /// The item's attributes, exactly `service` and `account`.
  public var attributes: [String: String] { SecretClient.attributes(service: service, account: account) }

  /// What keyring managers show for the item.
  public var label: String { "\(service) (\(account))" }

  /// `service S, account A in COLLECTION`, for messages.
  public var description: String { "service \(service), account \(account) in \(collection)" }
}

extension SecretItemAddress {
  /// The attributes of a backup of undecodable bytes: the item's, plus `backup` = `stamp`.
  func backupAttributes(stamp: String) -> [String: String] { attributes.merging(["backup": stamp]) { $1 } }

  /// What keyring managers show for a backup of undecodable bytes.
  func backupLabel(stamp: String) -> String { "Backup of undecodable \(label), \(stamp)" }
}
