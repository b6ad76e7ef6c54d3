/// Where a ``SecretKey`` keeps its value: the item with exactly the attributes `service` and
/// `account` in a collection. These are the attributes `secret-tool` uses, so
/// `secret-tool lookup service S account A` reads the same item.
public struct SecretItemAddress: Hashable, Sendable, CustomStringConvertible {
  public var service: String
  public var account: String
  public var collection: CollectionID

  public init(service: String, account: String, collection: CollectionID = .default) {
    self.service = service
    self.account = account
    self.collection = collection
  }

  public var attributes: [String: String] { SecretClient.attributes(service: service, account: account) }

  /// What keyring managers show for the item.
  public var label: String { "\(service) (\(account))" }

  public var description: String { "service \(service), account \(account) in \(collection)" }
}
