// Which item an address names: the one rule for every reader and writer of this project, in
// the client (SecretClient, and through it Secrets and secretctl) and in the provider (secretd's
// `CreateItem` with replace, and the credentials it hands units). It lives below both because
// secretd does not link the client: two copies of it would drift, as three did before.

/// The rule that decides whether an item is the one an address names.
///
/// An address is a set of attributes, such as `service` and `account`. An item is the one it
/// names when the item's attributes equal the address's exactly, leaving out on both sides the
/// attributes that describe an item rather than name it:
///
/// - `xdg:schema`: libsecret (`secret-tool`, git's helper) stores the schema's name there, and
///   gnome-keyring treats an item without one as `org.freedesktop.Secret.Generic`; who wrote the
///   item is not where it is.
/// - the expiry, `xdg:expires` (what secretctl writes) or `expires-at`, in unix seconds: an
///   expiry is part of an item, as its label is, not of its address.
///
/// Every other attribute names, `xdg:` ones included. The `xdg:` prefix is reserved for
/// attributes freedesktop.org defines, and `xdg:schema` is the only one defined; an unknown one
/// may well tell two items apart, and counting it means that at worst an item is listed as
/// having more attributes and left alone, never that a writer replaces or deletes an item its
/// caller did not name.
package enum AddressRule {
  /// Where libsecret stores an item's schema name.
  package static let schemaAttribute = "xdg:schema"
  /// The expiry attribute this project writes (`secretctl set --ttl`), in unix seconds.
  package static let expiryAttribute = "xdg:expires"
  /// Every attribute secretd reads an item's expiry from, in the order it looks.
  package static let expiryAttributes = [expiryAttribute, "expires-at"]

  /// Whether the attribute `name` describes an item (its schema, its expiry) rather than names it.
  package static func describes(_ name: String) -> Bool {
    name == schemaAttribute || expiryAttributes.contains(name)
  }

  /// The attributes among `attributes` that name an item: its address.
  package static func address(of attributes: [String: String]) -> [String: String] {
    attributes.filter { !describes($0.key) }
  }

  /// Whether the item whose attributes are `stored` is the one `address` names: the two are
  /// equal once the attributes that describe an item are left out of both.
  ///
  /// ```swift
  /// AddressRule.isNamed(["service": "s", "xdg:expires": "1700000000"], by: ["service": "s"])  // true
  /// AddressRule.isNamed(["service": "s", "account": "a"], by: ["service": "s"])               // false
  /// ```
  package static func isNamed(_ stored: [String: String], by address: [String: String]) -> Bool {
    // Counted first: most items that fail differ in how many attributes name them.
    let named = stored.count(where: { !describes($0.key) })
    guard named == address.count(where: { !describes($0.key) }) else { return false }
    return stored.allSatisfy { describes($0.key) || address[$0.key] == $0.value }
  }
}
