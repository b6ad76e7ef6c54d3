// Bounds on what clients may store and ask for, each named by the flag that changes it. One
// table (`Limit`) drives the bounds, their flags, their help text and their error messages.
import SystemCalls

/// Bounds on secrets, attributes, items, memory and the size of calls and answers.
package struct Limits: Sendable, Equatable {
  /// Largest secret in bytes.
  package var maxSecretSize = 1 << 20
  /// Most attributes on one item, and in one search.
  package var maxAttributes = 64
  /// Longest attribute name or value, label or content type, in bytes.
  package var maxAttributeLength = 4096
  /// Most items across all collections.
  package var maxItems = 100_000
  /// Most open transfer sessions per client; past it, its least recently used one is closed.
  package var maxSessionsPerClient = 1024
  /// Most open transfer sessions of all clients together, so that their keys (32 locked bytes
  /// each: 128 KiB for 4,096) stay within the locked memory set aside beside the budget.
  package var maxSessions = 4096
  /// Most collections.
  package var maxCollections = 64
  /// Most aliases.
  package var maxAliases = 64
  /// Most object paths in one call (GetSecrets, Lock, Unlock).
  package var maxPathsPerCall = 10_000
  /// Largest answer in bytes: well under the 32 MiB a bus allows by default.
  package var maxReplySize = 16 << 20
  /// Bytes of the store's records (secrets, attributes, labels, collections, aliases, each at
  /// the size of its block in the arena), by default sized from the locked memory the process
  /// may use (see ``memoryBudget(lockedMemoryLimit:)``).
  package var maxMemory: Int

  package init(maxMemory: Int = Limits.memoryBudget(lockedMemoryLimit: ResourceLimits.lockedMemory)) {
    self.maxMemory = maxMemory
  }

  /// Locked memory kept for what is not the store: libgcrypt's pool (256 KiB), the keys of
  /// ``maxSessions`` sessions (128 KiB) and room to spare.
  static let lockedOutsideTheStore = 1 << 20

  /// The budget that fits in `lockedMemoryLimit` bytes of locked memory (nil: unlimited, 1 GiB):
  /// what is left past ``lockedOutsideTheStore``, less the arena's header and its eighth of
  /// room to spare (``arenaSize``).
  package static func memoryBudget(lockedMemoryLimit: Int?) -> Int {
    guard let limit = lockedMemoryLimit else { return 1 << 30 }
    return max(0, limit - lockedOutsideTheStore - 2 * Memory.pageSize) / 9 * 8
  }

  /// The largest budget whose arena fits in `size` bytes (``arenaSize``'s inverse, rounded down).
  static func budget(ofArenaSized size: Int) -> Int {
    max(0, size - ArenaLayout.headerSize - Memory.pageSize) / 9 * 8
  }

  /// The size of the arena holding the store: its header, the budget and an eighth more, so that
  /// a record can be rewritten before its old copy goes and free space can be fragmented, and a
  /// page more for the store's own first collection; in whole pages.
  package var arenaSize: Int {
    let page = Memory.pageSize
    let size = ArenaLayout.headerSize + maxMemory + maxMemory / 8 + page
    return (size + page - 1) / page * page
  }
}

/// One bound: its flag, what it counts, and where it lives in ``Limits``.
package enum Limit: String, CaseIterable, Sendable {
  case secretSize = "--max-secret-size"
  case attributes = "--max-attributes"
  case attributeLength = "--max-attribute-length"
  case items = "--max-items"
  case sessions = "--max-sessions"
  case allSessions = "--max-sessions-total"
  case collections = "--max-collections"
  case aliases = "--max-aliases"
  case pathsPerCall = "--max-paths"
  case replySize = "--max-reply-size"
  case memory = "--max-memory"

  /// The flag that sets it.
  package var flag: String { rawValue }

  package var keyPath: WritableKeyPath<Limits, Int> {
    switch self {
    case .secretSize: \.maxSecretSize
    case .attributes: \.maxAttributes
    case .attributeLength: \.maxAttributeLength
    case .items: \.maxItems
    case .sessions: \.maxSessionsPerClient
    case .allSessions: \.maxSessions
    case .collections: \.maxCollections
    case .aliases: \.maxAliases
    case .pathsPerCall: \.maxPathsPerCall
    case .replySize: \.maxReplySize
    case .memory: \.maxMemory
    }
  }

  /// Whether it counts bytes (and takes sizes like `4M`).
  package var isSize: Bool { [.secretSize, .attributeLength, .replySize, .memory].contains(self) }

  /// What it is, for `--help`.
  package var help: String {
    switch self {
    case .secretSize: "largest secret, in bytes"
    case .attributes: "most attributes on an item or in a search"
    case .attributeLength: "longest attribute, label or content type, in bytes"
    case .items: "most items"
    case .sessions: "most open sessions per client; past it, its least recently used one closes"
    case .allSessions: "most open sessions of all clients; past it, a client over its share is refused"
    case .collections: "most collections"
    case .aliases: "most aliases"
    case .pathsPerCall: "most object paths in one call"
    case .replySize: "largest answer, in bytes"
    case .memory: "most bytes of secrets, attributes and labels in all"
    }
  }

  /// What it bounds, for error messages.
  var what: String {
    switch self {
    case .secretSize: "secret size in bytes"
    case .attributes: "attributes per item or search"
    case .attributeLength: "attribute, label or content type length in bytes"
    case .items: "number of items"
    case .sessions: "open sessions per client"
    case .allSessions: "open sessions of all clients"
    case .collections: "number of collections"
    case .aliases: "number of aliases"
    case .pathsPerCall: "object paths per call"
    case .replySize: "answer size in bytes"
    case .memory: "bytes of secrets, attributes and labels in all"
    }
  }
}

/// The checks the store makes before it takes anything in.
extension Limits {
  func checkText(_ text: String) throws(StoreError) {
    let length = text.utf8.count
    if length > maxAttributeLength {
      throw .limitExceeded(.attributeLength, actual: length, maximum: maxAttributeLength)
    }
  }

  func checkAttributes(_ attributes: [String: String]) throws(StoreError) {
    if attributes.count > maxAttributes {
      throw .limitExceeded(.attributes, actual: attributes.count, maximum: maxAttributes)
    }
    for (name, value) in attributes {
      try checkText(name)
      try checkText(value)
    }
  }

  func checkSecretSize(_ count: Int) throws(StoreError) {
    if count > maxSecretSize {
      throw .limitExceeded(.secretSize, actual: count, maximum: maxSecretSize)
    }
  }
}

/// Byte counts as people read them.
package enum Size {
  /// `8 MiB`, `3.5 MiB`, `64 KiB`, `4096 bytes`.
  package static func text(_ bytes: Int) -> String {
    if bytes >= 1 << 20 {
      let mebibytes = Double(bytes) / Double(1 << 20)
      return mebibytes == mebibytes.rounded() ? "\(Int(mebibytes)) MiB" : "\((mebibytes * 10).rounded() / 10) MiB"
    }
    return bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
  }
}
