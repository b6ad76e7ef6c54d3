// Finding text in text, and bytes in bytes, with the standard library alone. The usual calls
// (`String.contains(_:)` with a string, `ranges(of:)`, `firstRange(of:)`) come from
// _StringProcessing or from Foundation's `DataProtocol`, and either one links megabytes of
// library into secretctl, whose every start then pays for their relocations and for scanning
// their protocol conformances (Benchmarks/NOTES.md). `SecretctlLinkTests` keeps them out.

extension Collection where Element: Equatable {
  /// Where `pattern` first occurs, element for element; nil when it does not, or is empty.
  func firstRange(matching pattern: some Collection<Element>) -> Range<Index>? {
    guard let first = pattern.first else { return nil }
    var start = startIndex
    while let candidate = self[start...].firstIndex(of: first) {
      var position = candidate
      var expected = pattern.startIndex
      while expected != pattern.endIndex, position != endIndex, self[position] == pattern[expected] {
        formIndex(after: &position)
        pattern.formIndex(after: &expected)
      }
      if expected == pattern.endIndex { return candidate..<position }
      start = index(after: candidate)
    }
    return nil
  }
}

extension StringProtocol {
  /// Whether `text` occurs in this text, byte for byte (no Unicode equivalence).
  func includes(_ text: String) -> Bool { utf8.firstRange(matching: text.utf8) != nil }
}
