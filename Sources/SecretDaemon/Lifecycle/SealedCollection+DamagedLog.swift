// A damaged log is never served in part and never stops secretd: it is renamed aside beside
// itself (`login.log.rejected-<UTC time>`, never deleted), reported (a warning, and
// `RejectedStores` for `secretctl status`, as a refused arena is, at every start while the file
// is there), and `login` starts a new, empty log at its unlock.
import SystemCalls

extension SealedCollection {
  /// Moves the damaged log at ``logPath`` aside and reports it. Throws only when it cannot be
  /// moved: it is then neither opened nor written over.
  func setAside(damagedLog damage: RecordLogError) throws(RecordLogError) {
    let kept = try Self.moveAside(logPath)
    let report =
      "\(damage); it is kept as \(kept), never deleted by secretd, and \(Self.name) starts anew, empty, when "
      + "unlocked: its items are not served; restore them from a backup or store them again, then delete the kept "
      + "file (`secretctl store discard-rejected` forgets this report)"
    rejectedLogs.append(report)
    Log.warning(report)
  }

  /// Reports the logs an earlier start set aside that are still there.
  func reportLogsSetAside() {
    let (directory, name) = Files.split(logPath)
    for kept in Files.names(in: directory).sorted() where kept.hasPrefix(name + Self.rejectedSuffix) {
      rejectedLogs.append(
        "\(directory)/\(kept) is a damaged log set aside at an earlier start, never deleted by secretd: restore what "
          + "you need of it from a backup, then delete it (`secretctl store discard-rejected` forgets this report)")
    }
  }

  static let rejectedSuffix = ".rejected-"

  /// Renames `path` to `path.rejected-<UTC time>` (`-2`, `-3`… when that is taken) and syncs
  /// its folder; returns the new path.
  static func moveAside(_ path: String) throws(RecordLogError) -> String {
    let now = WallClock.seconds
    let base = "\(path)\(rejectedSuffix)\(UTCTime(secondsSince1970: now).map { $0.compact + "Z" } ?? String(now))"
    var target = base
    var suffix = 1
    while Files.exists(target) {
      suffix += 1
      target = "\(base)-\(suffix)"
    }
    do { try Files.move(path, to: target) } catch { throw .file(error) }
    let directory = Files.split(path).directory
    if let errno = Files.syncDirectory(directory) {
      throw .file(FileCallError(call: "fsync of the folder", path: directory, errno: errno))
    }
    return target
  }
}
