import SystemCalls

/// A token file, read only when no one else could have written or read it: a regular file of
/// this process's user, reached without following a symbolic link, that neither its group nor
/// others may use (as ssh treats a private key).
enum TokenFile {
  /// The first line of the file at `path`.
  static func token(at path: String) throws(OpenBaoError) -> String {
    let file: FileDescriptor
    do {
      // Non-blocking: a FIFO put in the file's place must not hang the open.
      file = try FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking])
    } catch {
      throw .noToken(Self.openFailure(error, path))
    }
    defer { file.close() }
    let status: FileStatus
    let contents: [UInt8]
    do throws(Errno) { status = try file.status() } catch { throw readFailure(error, path) }
    try check(status, path)
    do throws(Errno) { contents = try file.readAll() } catch { throw readFailure(error, path) }
    guard let line = contents.split(separator: UInt8(ascii: "\n")).first, !line.isEmpty else {
      throw .noToken(
        "the token file \(path) is empty; put a token in it, or check that what writes it (an OpenBao agent) runs")
    }
    return String(decoding: line, as: UTF8.self).trimmingTrailingReturn
  }

  private static func check(_ status: FileStatus, _ path: String) throws(OpenBaoError) {
    guard status.isRegularFile else {
      throw .noToken("the token file \(path) is not a regular file; name the file that holds the token")
    }
    guard status.owner == UserID.current else {
      throw .noToken(
        "the token file \(path) belongs to user \(status.owner), not to this process's user \(UserID.current); "
          + "a token file must be the user's own: have it written by this user, or `chown` it")
    }
    guard !status.permissions.allowsGroupOrOthers else {
      throw .noToken(
        "the token file \(path) may be used by its group or others (mode \(status.permissions.octal)); make it "
          + "private with `chmod 600 \(path)` (an OpenBao agent's file sink: `mode = 0600`)")
    }
  }

  private static func readFailure(_ error: Errno, _ path: String) -> OpenBaoError {
    .noToken("the token file \(path) cannot be read (\(error)); check the path and its permissions")
  }

  private static func openFailure(_ error: Errno, _ path: String) -> String {
    switch error {
    case .symbolicLinkLoop:
      "the token file \(path) is a symbolic link, which is not followed (it could point anywhere); name the file itself"
    case .noSuchFile:
      "the token file \(path) does not exist; check the path, and that what writes it (an OpenBao agent) runs"
    default:
      "the token file \(path) cannot be opened (\(error)); check the path and its permissions"
    }
  }
}

extension String {
  /// Without a trailing carriage return (a file written on Windows).
  fileprivate var trimmingTrailingReturn: String { hasSuffix("\r") ? String(dropLast()) : self }
}
