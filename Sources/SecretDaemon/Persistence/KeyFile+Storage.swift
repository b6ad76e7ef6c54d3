// The key file on disk: read whole, replaced atomically (a temporary file synced, renamed over
// it, the folder synced), readable by its owner only.
import SystemCalls

extension KeyFile {
  /// The key file at `path`; nil when there is none.
  package static func load(from path: String) throws(KeyFileError) -> KeyFile? {
    let bytes: [UInt8]?
    do { bytes = try Files.read(path) } catch {
      throw .file(call: error.call, path: error.path, reason: "\(error.errno)")
    }
    guard let bytes else { return nil }
    return try KeyFile(decoding: bytes, path: path)
  }

  /// Writes the file at `path` (mode 0600) so that a crash leaves the old file or the new one.
  package func save(to path: String) throws(KeyFileError) {
    do { try Files.replace(path, with: encoded(), permissions: .ownerReadWrite) } catch {
      switch error {
      case .failed(let call, let path, let errno): throw .file(call: call, path: path, reason: "\(errno)")
      case .replacedButNotSynced(let path, let errno):
        throw .file(call: "fsync of the folder", path: path, reason: "\(errno)")
      }
    }
  }
}
