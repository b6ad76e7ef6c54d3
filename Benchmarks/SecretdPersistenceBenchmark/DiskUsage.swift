import Foundation

/// The files a provider keeps its items in, and their sizes in bytes.
struct DiskUsage {
  let files: [(name: String, bytes: Int)]

  /// The regular files directly in `folder`.
  init(of folder: URL) throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    files = try names.compactMap { name in
      let attributes = try FileManager.default.attributesOfItem(atPath: folder.appending(path: name).path)
      guard attributes[.type] as? FileAttributeType == .typeRegular else { return nil }
      return (name, (attributes[.size] as? Int) ?? 0)
    }
  }

  var total: Int { files.reduce(0) { $0 + $1.bytes } }

  /// `N bytes per item (a.log 1234 + a.key 56 bytes)`.
  func perItem(_ items: Int) -> String {
    "\(total / max(items, 1)) bytes per item ("
      + files.map { "\($0.name) \($0.bytes)" }.joined(separator: " + ") + " bytes)"
  }
}
