import SecretClient

extension SecretBytes {
  /// Removes one trailing `\n`, and a `\r` before it (what `--trim` drops from piped input).
  func trimOneNewline() {
    guard last == UInt8(ascii: "\n") else { return }
    removeLast(count > 1 && self[count - 2] == UInt8(ascii: "\r") ? 2 : 1)
  }
}
