// Whole files: read, replaced atomically, removed; folders made; existence.
import Glibc

/// A failed atomic replacement: before the rename the file is untouched; after it, only the
/// folder's sync failed and the file holds the new bytes.
package enum AtomicWriteError: Error, Equatable {
  case failed(call: String, path: String, Errno)
  case replacedButNotSynced(path: String, Errno)
}

package enum Files {
  /// A whole file's bytes; nil when it does not exist. Wraps open(2), read(2).
  package static func read(_ path: String) throws(FileCallError) -> [UInt8]? {
    let file: FileDescriptor
    do {
      file = try FileDescriptor.open(path, .readOnly)
    } catch .noSuchFile {
      return nil
    } catch {
      throw FileCallError(call: "open", path: path, errno: error)
    }
    defer { file.close() }
    do { return try file.readAll() } catch { throw FileCallError(call: "read", path: path, errno: error) }
  }

  /// Replaces a file atomically: writes a temporary file in the same folder, syncs it, keeps
  /// the permissions of the file it replaces (or `permissions`, when given), renames it over the
  /// target and syncs the folder. Makes missing folders. Wraps open, fchmod, write, fsync, rename.
  package static func replace(
    _ path: String, with bytes: [UInt8], permissions: FilePermissions? = nil
  ) throws(AtomicWriteError) {
    try bytes.withUnsafeBytes { raw in
      Result { () throws(AtomicWriteError) in try replace(path, with: raw, permissions: permissions) }
    }.get()
  }

  package static func replace(
    _ path: String, with bytes: UnsafeRawBufferPointer, permissions: FilePermissions? = nil
  ) throws(AtomicWriteError) {
    let (directory, name) = split(path)
    do { try makeDirectories(directory) } catch { throw .failed(call: error.call, path: error.path, error.errno) }
    var info = stat()
    let existingMode: mode_t? =
      permissions.map { mode_t($0.rawValue) } ?? (stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil)
    let temporary = "\(directory)/.\(name).tmp-\(ProcessID.current)-\(UInt32.random(in: 0...UInt32.max))"
    let file: FileDescriptor
    do {
      file = try FileDescriptor.open(
        temporary, .writeOnly, options: [.create, .exclusiveCreate],
        permissions: FilePermissions(rawValue: existingMode ?? 0o644))
    } catch {
      throw .failed(call: "open", path: temporary, error)
    }
    var removeTemporary = true
    defer { if removeTemporary { _ = unlink(temporary) } }
    do {
      defer { file.close() }
      if let existingMode, fchmod(file.rawValue, existingMode) != 0 {
        throw AtomicWriteError.failed(call: "fchmod", path: temporary, .current)
      }
      do throws(Errno) { try file.writeAll(bytes) } catch {
        throw AtomicWriteError.failed(call: "write", path: temporary, error)
      }
      do { try file.sync() } catch { throw AtomicWriteError.failed(call: "fsync", path: temporary, error) }
    } catch let error as AtomicWriteError {
      throw error
    } catch {
      throw .failed(call: "write", path: temporary, .ioError)
    }
    if rename(temporary, path) != 0 { throw .failed(call: "rename", path: path, .current) }
    removeTemporary = false
    if let error = syncDirectory(directory) { throw .replacedButNotSynced(path: path, error) }
  }

  /// Removes a file; one that does not exist is not an error. Wraps unlink(2).
  package static func remove(_ path: String) throws(FileCallError) {
    if unlink(path) != 0, Errno.current != .noSuchFile {
      throw FileCallError(call: "unlink", path: path, errno: .current)
    }
  }

  /// Where the symbolic link at `path` points; nil when it is not one or cannot be read.
  /// Wraps readlink(2).
  package static func symbolicLinkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink(path, &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    // A target that is not UTF-8 would not survive the round trip through String: say none.
    return String(validating: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether `path` is a regular file (following links), which can be read twice alike. Wraps stat(2).
  package static func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
  }

  /// Wraps stat(2).
  package static func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
  }

  /// Splits `/a/b/c.json` into `/a/b` and `c.json`.
  package static func split(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let directory = String(path[..<slash])
    return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
  }

  /// Makes a folder and its missing parents. Wraps mkdir(2).
  package static func makeDirectories(_ directory: String) throws(FileCallError) {
    if directory.isEmpty || exists(directory) { return }
    let (parent, _) = split(directory)
    if parent != directory { try makeDirectories(parent) }
    if mkdir(directory, 0o755) != 0, Errno.current != .exists {
      throw FileCallError(call: "mkdir", path: directory, errno: .current)
    }
  }

  /// Makes `directory` (its parent must exist) readable by its owner only, or makes an existing
  /// one so; fails when it is not a folder of this process's user. Wraps mkdir(2), lstat(2) and
  /// chmod(2).
  package static func makePrivateDirectory(_ directory: String) throws(FileCallError) {
    if mkdir(directory, 0o700) != 0, Errno.current != .exists {
      throw FileCallError(call: "mkdir", path: directory, errno: .current)
    }
    var info = stat()
    guard lstat(directory, &info) == 0 else { throw FileCallError(call: "lstat", path: directory, errno: .current) }
    guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else {
      throw FileCallError(call: "lstat", path: directory, errno: .notDirectory)
    }
    guard chmod(directory, 0o700) == 0 else { throw FileCallError(call: "chmod", path: directory, errno: .current) }
  }

  /// A new private folder `base`/`prefix`XXXXXX (random). Wraps mkdtemp(3).
  package static func makeTemporaryDirectory(in base: String, prefix: String) throws(FileCallError) -> String {
    var template = Array("\(base)/\(prefix)XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      throw FileCallError(call: "mkdtemp", path: base, errno: .current)
    }
    return String(cString: made)
  }

  /// The names in `directory` but `.` and `..`; none when it cannot be read. Wraps opendir(3),
  /// readdir(3).
  package static func names(in directory: String) -> [String] {
    guard let listing = opendir(directory) else { return [] }
    defer { closedir(listing) }
    var names: [String] = []
    while let entry = readdir(listing) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Removes the files directly in `directory`, then the folder. Wraps opendir(3), unlink(2), rmdir(2).
  package static func removeDirectory(_ directory: String) {
    if let listing = opendir(directory) {
      while let entry = readdir(listing) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { unlink("\(directory)/\(name)") }
      }
      closedir(listing)
    }
    rmdir(directory)
  }

  /// Syncs a folder; the error, if the sync failed where it can work. Wraps fsync(2).
  package static func syncDirectory(_ directory: String) -> Errno? {
    let folder: FileDescriptor
    do { folder = try FileDescriptor.open(directory, .readOnly, options: .directory) } catch { return error }
    defer { folder.close() }
    do { try folder.sync() } catch {
      // Some file systems cannot sync a folder; the rename itself is already atomic there.
      if error != .invalidArgument, error != .readOnlyFileSystem { return error }
    }
    return nil
  }
}

/// A file operation that failed: which call, on which path, and why.
package struct FileCallError: Error, Equatable {
  package let call: String
  package let path: String
  package let errno: Errno

  package init(call: String, path: String, errno: Errno) {
    self.call = call
    self.path = path
    self.errno = errno
  }
}
