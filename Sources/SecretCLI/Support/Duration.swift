/// Parses `--ttl` durations: `90`, `90s`, `15m`, `2h`, `1d`, or a sum such as `1h30m`; returns
/// seconds, or `nil` when the text is not a positive duration.
func parseDuration(_ text: String) -> UInt64? {
  let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]
  var total: UInt64 = 0
  var digits = ""
  for character in text {
    if character.isASCII, character.isNumber {
      digits.append(character)
    } else if let unit = units[character], let number = UInt64(digits) {
      let (product, overflow) = number.multipliedReportingOverflow(by: unit)
      let (sum, carry) = total.addingReportingOverflow(product)
      guard !overflow, !carry else { return nil }
      total = sum
      digits = ""
    } else {
      return nil
    }
  }
  if !digits.isEmpty {
    guard let seconds = UInt64(digits) else { return nil }
    let (sum, carry) = total.addingReportingOverflow(seconds)
    guard !carry else { return nil }
    total = sum
  }
  return total > 0 ? total : nil
}
