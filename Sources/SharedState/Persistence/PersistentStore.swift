/// Where a persistent key keeps one value: read it, write it, delete it, keep a copy of it, and
/// say when someone else changed it.
///
/// A store handles one stored value (one file, one keyring item, one defaults key) in its
/// stored form: bytes for files and secrets, a property-list value for `UserDefaults`. It knows
/// nothing of the value's type, of batching or of echoes: ``PersistentValue`` does that once for
/// every key. A store of a new kind (a database row, a remote secret store) is a small type:
///
/// ```swift
/// struct RowStore: PersistentStore {
///   let table: Table, key: String
///   var description: String { "row \(key) of \(table.name)" }
///   func read() throws -> Data? { try table.select(key) }
///   func write(_ bytes: Data) throws { try table.upsert(key, bytes) }
///   func delete() throws { try table.delete(key) }
///   func keepCopy(of bytes: Data, stamp: String) throws { try table.upsert("\(key).undecodable-\(stamp)", bytes) }
///   func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription? {
///     table.observe(key, onChange)
///   }
/// }
/// ```
///
/// Every method may block (files, D-Bus, HTTP); ``PersistentValue`` calls them off Swift's
/// cooperative pool, except for the first read of a value, which runs where the first handle
/// is declared.
/// Its `description` names the place (`/home/me/notes.json`, `service S, account A`) in the
/// messages the core writes.
public protocol PersistentStore<Stored>: Sendable, CustomStringConvertible {
  /// What the store holds: `Data`, or another representation that tells equal contents apart.
  associatedtype Stored: Equatable & Sendable

  /// The stored value; nil when nothing is stored.
  func read() throws -> Stored?

  /// Replaces the stored value (creating it when absent). A store that can, writes atomically:
  /// after a failure the old value is still there.
  func write(_ stored: Stored) throws

  /// Removes the stored value; nothing stored is not an error.
  func delete() throws

  /// Keeps `stored`, which does not decode, somewhere beside the value before it is
  /// overwritten (a file `NAME.corrupt-STAMP`, a backup item), so a user can recover it.
  /// `stamp` is a UTC time that tells copies apart.
  func keepCopy(of stored: Stored, stamp: String) throws

  /// Calls `onChange` whenever the stored value may have changed, by anyone (the core reads it
  /// and ignores its own writes). Returns nil when it cannot watch yet but may later (a folder
  /// that does not exist yet, a service that is down): the core tries again after its next
  /// successful read or write. Throws when watching failed for good.
  func watch(_ onChange: @escaping @Sendable () -> Void) throws -> SharedSubscription?

  /// Whether the core reads the stored value before each write, to keep a copy of undecodable
  /// contents it has not seen yet (someone wrote them while it was not watching). Cheap for a
  /// file, a round trip for a remote store: `true` by default.
  var readsBeforeWriting: Bool { get }

  /// Called when the core throws away what ``read()`` just returned, because a local value began
  /// waiting for its write meanwhile and will overwrite the store. A store whose writes are
  /// based on what it last read (check-and-set on a version) goes back to what they were based
  /// on before that read, so that the newer contents it read are not overwritten unseen. Nothing
  /// by default.
  func readDiscarded()

  /// Whether the store lives in this process's memory (a test's): its change notices are then
  /// handled before the call that made them returns, and a last handle's pending write is
  /// written before the handle is gone, so a test sees each effect at once. `false` by default.
  var isInMemory: Bool { get }

  /// Whether the first change after a quiet spell is written at once (so a single change is
  /// stored without waiting a window), the ones that follow batched into one write per window.
  /// A store that keeps every write as a version (OpenBao's KV) says no: its changes then wait
  /// for the window, so `withLock` then `save()` makes one version, not two. `true` by default.
  var writesFirstChangeAtOnce: Bool { get }
}

extension PersistentStore {
  /// `true`: the stored value is read before each write, so undecodable contents written while
  /// nobody watched are kept too.
  public var readsBeforeWriting: Bool { true }
  /// `false`: a store outside this process.
  public var isInMemory: Bool { false }
  /// Nothing: the store's writes do not depend on what it read.
  public func readDiscarded() {}
  /// `true`: a single change is stored without waiting for its window.
  public var writesFirstChangeAtOnce: Bool { true }
}
