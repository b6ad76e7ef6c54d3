// FoundationEssentials, not Foundation: `Date` is the same type in both, and this module does not
// pull CoreFoundation and ICU into every program that links it (secretctl starts faster).
public import FoundationEssentials
import SystemCalls

/// What a search returns about one item: where it is, how it is labelled and found, and its
/// secret only when the search asked for secrets.
public struct SecretItem: Sendable, Equatable {
  /// The item's D-Bus object path: its collection's path and one more element.
  public var path: String
  /// What keyring managers show for the item; empty when it has none.
  public var label: String
  /// The attributes the item is found by, such as `service` and `account`.
  public var attributes: [String: String]
  /// Whether the item is locked at the time of the search; a locked item's secret is not read.
  public var isLocked: Bool
  /// When the item was created, to the second, as the provider reports it.
  public var created: Date
  /// When the item was last modified, to the second, as the provider reports it.
  public var modified: Date
  /// `nil` unless the search was made with `includeSecrets: true` and the item is unlocked.
  public var secret: SecretValue?

  /// The object path of the collection that holds the item.
  public var collectionPath: String { SecretClient.collectionPath(ofItem: path) }
}

/// One collection of the Secret Service.
public struct CollectionInfo: Sendable, Hashable {
  /// The collection's D-Bus object path, such as `/org/freedesktop/secrets/collection/login`.
  public var path: String
  /// The collection's display name; empty when the provider gives none.
  public var label: String
  /// Whether the collection is locked: its items' secrets cannot be read until it is unlocked.
  public var isLocked: Bool
  /// How many items the collection holds (the length of its `Items` property).
  public var itemCount: Int
}

/// A change to one item of a watched collection, as the provider signals it.
public struct ItemChange: Sendable, Hashable {
  /// Which signal the provider sent: `ItemCreated`, `ItemChanged` or `ItemDeleted`.
  public enum Kind: String, Sendable, Hashable {
    /// An item was created (`ItemCreated`), changed (`ItemChanged`) or deleted (`ItemDeleted`).
    case created, changed, deleted
  }

  /// What happened to the item.
  public var kind: Kind
  /// The object path of the item that changed.
  public var itemPath: String
}

/// Where secretd keeps its store, as it reports it (other providers report nothing).
public struct ProviderStore: Sendable, Hashable {
  /// The memory the store lives in: `memfd_secret`, `locked memfd` or `unlocked memfd`.
  public var memory: String
  /// Bytes the store may hold, and bytes it holds.
  public var budget: Int
  public var used: Int
  /// Whether the service manager keeps the store, so that a crash or a restart loses nothing.
  public var isKept: Bool
  /// Why each store handed back at start was refused; each is kept until discarded.
  public var rejected: [String]
  /// The largest secret the provider takes, in bytes (secretd's `--max-secret-size`).
  public var maxSecretSize: Int?
  /// secretd's persistent collection (`--persistent`): `off`, `new` (no passphrase yet: the
  /// first ``SecretClient/unlockSealed(passphrase:)`` sets it), `locked` or `unlocked`; nil
  /// from a secretd that predates it.
  public var sealedState: String?
}

/// A way into secretd's persistent collection: each wraps the same data key.
public struct SealedUnlocker: Sendable, Hashable {
  /// Its number, which `removeUnlocker(_:)` takes.
  public var number: UInt32
  /// `passphrase`, `login` (the login password, given by PAM) or `tpm`.
  public var kind: String
}

/// Who provides the Secret Service on the bus.
public struct ProviderInfo: Sendable, Hashable {
  /// The well-known name clients use, normally `org.freedesktop.secrets`.
  public var busName: String
  /// The owner's unique connection name, such as `:1.42`.
  public var uniqueName: String
  /// The owner's process id, when the bus tells it.
  public var pid: Int32?
  /// The program the owner runs (`/usr/bin/gnome-keyring-daemon`, `secretd`, …), when readable.
  public var executable: String?
  /// The Unix user the owner runs as, as the bus tells it (`GetConnectionCredentials`).
  public var uid: UInt32?

  /// Whether the owner runs as the calling process's own (effective) user.
  public var runsAsCurrentUser: Bool { uid == Self.currentUser }

  /// `:1.42 (pid 1234, /usr/bin/secretd)`, for messages.
  public var ownerDescription: String {
    let process = [pid.map { "pid \($0)" }, executable].compactMap { $0 }.joined(separator: ", ")
    return process.isEmpty ? uniqueName : "\(uniqueName) (\(process))"
  }

  /// The effective user id of this process, which the bus reports for its connections.
  static var currentUser: UInt32 { UserID.effective.rawValue }

  /// Whether the provider is this project's secretd, which honours item expiry.
  public var isSecretd: Bool {
    executable.map { $0 == "secretd" || $0.hasSuffix("/secretd") } ?? false
  }
}
