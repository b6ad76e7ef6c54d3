// How much work a call's arguments ask for, decided before the call runs: calls small enough
// for the thread that reads the bus, which must never be held up by one client's large request.
import GLibBridge

extension Daemon {
  /// Most items a search may match, and most bytes of secrets a read may encrypt, to be
  /// answered on the reading thread.
  static let smallCallItems = 64
  static let smallCallSecretBytes = 64 << 10

  /// Whether a search for `query` (an `a{ss}`) matches few enough items. Under the read lock.
  func isSmallSearch(_ query: Variant?) -> Bool {
    guard let attributes = query?.stringDictionary else { return true }
    return store.matchBound(attributes) <= Self.smallCallItems
  }

  /// Whether the secrets of `paths` (an `ao`) are few and small enough. Under the read lock.
  func areSmallSecrets(_ paths: Variant?) -> Bool {
    guard let paths, paths.isOfType("ao") else { return true }
    guard paths.childCount <= Self.smallCallItems else { return false }
    var bytes = 0
    for path in paths.objectPaths ?? [] {
      guard let reference = try? resolveItem(path: path), let item = try? store.item(reference) else { continue }
      bytes += item.secretCount
      if bytes > Self.smallCallSecretBytes { return false }
    }
    return true
  }

  /// Whether the secret of the item at `path` is small enough. Under the read lock.
  func isSmallSecret(at path: String) -> Bool {
    guard let reference = try? resolveItem(path: path), let item = try? store.item(reference) else { return true }
    return item.secretCount <= Self.smallCallSecretBytes
  }
}
