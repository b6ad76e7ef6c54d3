import SystemCalls

/// Errors of ``FileStorageKey`` and ``FileStorage``; each message names the file and says
/// what to do.
public enum FileStorageError: Error, CustomStringConvertible, Sendable {
  /// The file exists but its bytes could not be decoded. It is left untouched; before
  /// anything is written over it, its bytes are kept beside it as `NAME.corrupt-TIMESTAMP`.
  case decodingFailed(path: String, reason: String)
  /// The value could not be encoded; nothing was written.
  case encodingFailed(path: String, reason: String)
  /// A system call failed; `reason` is the system's text and what to do about it.
  case systemCall(_ call: String, path: String, reason: String)
  /// The file was replaced with the new bytes, but its folder could not be synced: the change
  /// may be lost if the system crashes before it writes the folder on its own.
  case replacedButNotSynced(path: String, reason: String)

  /// What failed, on which file, and what to do about it.
  public var description: String {
    switch self {
    case .decodingFailed(let path, let reason):
      "Could not decode \(path): \(reason). The file was left untouched; before anything is "
        + "written over it, its current bytes will be kept beside it as "
        + "\(Files.split(path).name).corrupt-<timestamp>. Fix or remove the file and reload, "
        + "or change the value to replace it."
    case .encodingFailed(let path, let reason):
      "Could not encode the value for \(path): \(reason). Nothing was written."
    case .systemCall(let call, let path, let reason):
      "\(call) failed for \(path): \(reason)"
    case .replacedButNotSynced(let path, let reason):
      "\(path) was written, but its folder could not be synced: \(reason); the change may be lost if "
        + "the system crashes."
    }
  }

  init(_ failure: FileCallError) {
    self = .systemCall(failure.call, path: failure.path, reason: Self.explain(failure.errno))
  }

  init(_ failure: AtomicWriteError) {
    switch failure {
    case .failed(let call, let path, let errno): self = .systemCall(call, path: path, reason: Self.explain(errno))
    case .replacedButNotSynced(let path, let errno):
      self = .replacedButNotSynced(path: path, reason: Self.explain(errno))
    }
  }

  /// The system's text for an errno, and what the user can do about it.
  static func explain(_ errno: Errno) -> String {
    let advice =
      switch errno {
      case .permissionDenied, .notPermitted: "Check the permissions and owner of the file and its folder."
      case .noSpace, .quotaExceeded:
        "Free some disk space or raise the quota (for inotify_add_watch: raise fs.inotify.max_user_watches)."
      case .readOnlyFileSystem: "The file system is read-only; store the file elsewhere."
      case .noSuchFile, .notDirectory: "Check that the folder exists and the path is right."
      case .tooManyOpenFiles, .systemTooManyOpenFiles: "Too many open files; close some or raise the limit (ulimit -n)."
      default: "Check that the path is valid and accessible."
      }
    return "\(errno) (errno \(errno.code)). \(advice)"
  }
}

extension FileStorageError: StoredDespiteError {
  var valueIsStored: Bool {
    guard case .replacedButNotSynced = self else { return false }
    return true
  }
}
